import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Keeps PostgreSQL's statistics of the queue's tables (`pushes`, `push_parts`) as fresh as the queue: a burst of
/// pushes changes them within seconds, and autovacuum analyzes a table at most once per `autovacuum_naptime` (a minute
/// by default). Until then the planner believes the queue is what it was: a shared name's burst of 50,000 pushes, under
/// statistics that saw none queued, had each claim's order probes read the app's whole queue and sort it (15 ms a
/// probe, a claim of 1,000 pushes past the 30 s statement timeout), and a lease renewal scan `push_parts` per part.
///
/// A table is analyzed once its rows changed since its last analysis (`pg_stat_user_tables.n_mod_since_analyze`) by
/// ``minimumChanges`` and by ``changedFraction`` of its rows, as autovacuum decides but sooner and more often. Only one
/// process analyzes a table at a time (a transaction's advisory lock, which works through a transaction pooler).
/// Analyzing needs the tables' owner (or `MAINTAIN`, PostgreSQL 17): otherwise PostgreSQL skips it with a warning and
/// autovacuum alone keeps the statistics.
///
/// See PostgreSQL's documentation, "Updating Planner Statistics" (routine-vacuuming.html#VACUUM-FOR-STATISTICS).
public struct QueueStatistics: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// How often the tables' changes are looked at.
    public var interval: Duration = .seconds(1)
    /// Changed rows that a table's analysis waits for, however small the table: each push changes `pushes` three times
    /// (accepted, claimed, finished) and `push_parts` twice, and an analysis costs a few tenths of a second of a core.
    public var minimumChanges = 5000
    /// The fraction of a table's rows that must have changed since its last analysis (autovacuum's default is 0.1).
    public var changedFraction = 0.05

    /// The tables kept: the queue's pushes and their parts.
    enum Table: String, CaseIterable {
        case pushes
        case pushParts = "push_parts"
    }

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Looks every ``interval`` until the worker shuts down.
    public func run() async {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                try await self.refresh()
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                self.logger.warning("refreshing the queue's statistics failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
    }

    /// Analyzes the queue's tables that changed enough since their last analysis; returns those analyzed here.
    @discardableResult
    public func refresh() async throws(StoreError) -> [String] {
        let tables = Table.allCases.map { "'\($0.rawValue)'::regclass" }.joined(separator: ", ")
        return try await StoreError.mapping {
            let stale = try await self.client.query(
                """
                SELECT c.relname::text FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
                WHERE s.relid IN (\(unescaped: tables))
                  AND s.n_mod_since_analyze >= greatest(\(self.minimumChanges), \(self.changedFraction) * greatest(c.reltuples, 0))
                ORDER BY c.relname
                """,
                logger: self.logger
            ).decode(String.self).array().compactMap(Table.init(rawValue:))
            var analyzed: [String] = []
            for table in stale {
                let started = ContinuousClock.now
                let done = try await self.client.withTransaction(logger: self.logger) { connection in
                    // Another worker analyzing the table now: its statistics are on their way.
                    let locked = try await connection.query(
                        "SELECT pg_try_advisory_xact_lock(hashtext('blimp.analyze.' || \(table.rawValue)))", logger: self.logger
                    ).decode(Bool.self).array().first ?? false
                    guard locked else { return false }
                    try await connection.query("ANALYZE \(unescaped: table.rawValue)", logger: self.logger)
                    return true
                }
                guard done else { continue }
                analyzed.append(table.rawValue)
                self.logger.debug("queue statistics refreshed", metadata: ["table": "\(table.rawValue)", "seconds": "\(ContinuousClock.now - started)"])
            }
            return analyzed
        }
    }
}
