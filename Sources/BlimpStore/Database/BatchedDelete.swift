import Foundation
import Logging
import PostgresNIO

/// How the janitor deletes: in batches of at most ``size`` rows, each one statement found through an index and
/// committed alone (so no batch holds its locks or its snapshot for long), batch after batch until nothing is left or
/// the run's time budget is spent; what is left waits for the next run. A table of tenant rows is walked app by app,
/// in a new order each run, so that one app's backlog does not starve the others'.
public enum BatchedDelete {
    /// Rows per statement: a few milliseconds of work each on an index range.
    public static let size = 5000

    /// Runs `batch(key, limit)` (one statement over at most `limit` rows that returns how many it deleted) for each
    /// key, again while a batch comes back full, until the budget is spent; returns how many rows went. The first
    /// batch always runs, so a chore whose budget was spent by the ones before it still makes progress.
    static func run<Key: Sendable>(
        over keys: [Key], size: Int = Self.size, budget: Duration,
        _ batch: @escaping @Sendable (Key, Int) async throws -> Int
    ) async throws(StoreError) -> Int {
        let deadline = ContinuousClock.now + budget
        var deleted = 0
        var first = true
        for key in keys.shuffled() {
            guard first || ContinuousClock.now < deadline else { break }
            while true {
                let count = try await StoreError.mapping { try await batch(key, size) }
                deleted += count
                first = false
                guard count == size, ContinuousClock.now < deadline else { break }
            }
        }
        return deleted
    }

    /// Runs `batch(appID, cutoff, limit)` app by app as ``run(over:size:budget:_:)`` does, each app with its cutoff:
    /// its own in `cutoffs`, else `defaultCutoff` (a table whose rows age by their app's retention).
    static func byApp(
        cutoffs: [Int64: Date], defaultCutoff: Date, size: Int, budget: Duration, client: Database, logger: Logger,
        _ batch: @escaping @Sendable (_ appID: Int64, _ cutoff: Date, _ limit: Int) async throws -> Int
    ) async throws(StoreError) -> Int {
        let apps = try await Self.appIDs(client, logger: logger)
        return try await Self.run(over: apps, size: size, budget: budget) { appID, limit in
            try await batch(appID, cutoffs[appID] ?? defaultCutoff, limit)
        }
    }

    /// Deletes the rows of `table` whose `column` is before `cutoff`, app by app through an index on
    /// `(app_id, column)`, until `budget` is spent; returns how many went. `table` and `column` are written into the
    /// statement, so they are the store's own names, never input.
    static func deleteOlder(
        from table: StaticString, column: StaticString, before cutoff: Date, budget: Duration, size: Int,
        client: Database, logger: Logger
    ) async throws(StoreError) -> Int {
        let (table, column) = ("\(table)", "\(column)")
        let apps = try await Self.appIDs(client, logger: logger)
        return try await Self.run(over: apps, size: size, budget: budget) { appID, limit in
            try await Self.count(
                """
                WITH gone AS (
                    DELETE FROM \(unescaped: table)
                    WHERE ctid = ANY(ARRAY(
                            SELECT ctid FROM \(unescaped: table) WHERE app_id = \(appID) AND \(unescaped: column) < \(cutoff) LIMIT \(limit)))
                      AND app_id = \(appID) AND \(unescaped: column) < \(cutoff)
                    RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                on: client, logger: logger)
        }
    }

    /// The ids of every app, the keys tenant tables are walked by.
    static func appIDs(_ client: Database, logger: Logger) async throws(StoreError) -> [Int64] {
        try await StoreError.mapping { try await client.query("SELECT id FROM apps", logger: logger).decode(Int64.self).array() }
    }

    /// Runs `statement` and reads the one count it selects.
    static func count(_ statement: PostgresQuery, on client: Database, logger: Logger) async throws -> Int {
        try await client.query(statement, logger: logger).decode(Int.self).array().first ?? 0
    }
}
