import Foundation
import Logging
import PostgresNIO

/// The delivery outcomes from before day partitions. The upgrade renamed the old table aside (schema version
/// "delivery outcomes partitioned by day") and moved its last two hours into the partitioned table; the janitor moves
/// the rows still within their retention, an app at a time, newest first, in short batches (each a delete from the old
/// table and an insert into the new in one statement, so a row is moved once whatever stops midway), then drops the
/// old table with what is left, which is past retention. Readers see the partitioned table only.
struct UnpartitionedOutcomes: Sendable {
    let client: Database
    let logger: Logger

    static let table = "delivery_outcomes_unpartitioned"

    /// What a call did: rows moved, and the rows past retention dropped with the table (PostgreSQL's estimate; 0 until
    /// the table is dropped).
    struct Progress: Sendable {
        var moved = 0
        var dropped = 0
    }

    /// Moves rows until `deadline`, newer than their app's cutoff (`cutoffs`, else `defaultCutoff`), creating the day
    /// partitions they go to first (none moves until every such day has its partition: rows moved into the DEFAULT
    /// partition would have to be moved again, under its lock); drops the table once every app's are moved. Does
    /// nothing once the table is gone.
    func drain(
        appIDs: [Int64], defaultCutoff: Date, cutoffs: [Int64: Date], deadline: ContinuousClock.Instant
    ) async throws(StoreError) -> Progress {
        var progress = Progress()
        guard try await self.remains() else { return progress }
        let partitions = OutcomePartitions(client: self.client, logger: self.logger)
        let (first, now) = (cutoffs.values.reduce(defaultCutoff, min), Date())
        _ = try await partitions.create(from: first, through: now)
        guard try await partitions.missingDays(from: first, through: now).isEmpty else { return progress }
        for appID in appIDs {
            var through = Date.distantFuture
            while true {
                guard ContinuousClock.now < deadline else { return progress }
                let (moved, oldest) = try await self.moveBatch(appID: appID, from: cutoffs[appID] ?? defaultCutoff, through: through)
                progress.moved += moved
                guard moved == AgedRows.batch, let oldest else { break }
                through = oldest
            }
        }
        let rows = try await self.estimatedRows()
        if try await partitions.underLockTimeout(["DROP TABLE \(Self.table)"]) {
            progress.dropped = rows
            self.logger.info("the outcomes table from before partitions is drained and dropped", metadata: ["rows_past_retention": "\(rows)"])
        }
        return progress
    }

    /// Whether the old table is still there.
    private func remains() async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await self.client.query("SELECT to_regclass(\(Self.table)) IS NOT NULL", logger: self.logger).decode(Bool.self).array() == [true]
        }
    }

    /// Moves the newest ``AgedRows/batch`` rows of `appID` sent from `cutoff` through `through` (the previous batch's
    /// oldest: rows sent at the same time may straddle batches) through the old table's `(app_id, sent_at)` index;
    /// returns how many, and the oldest one's time.
    private func moveBatch(appID: Int64, from cutoff: Date, through: Date) async throws(StoreError) -> (Int, Date?) {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                WITH moved AS (
                    DELETE FROM \(unescaped: Self.table) WHERE ctid = ANY(ARRAY(
                        SELECT ctid FROM \(unescaped: Self.table) WHERE app_id = \(appID) AND sent_at >= \(cutoff) AND sent_at <= \(through)
                        ORDER BY sent_at DESC LIMIT \(AgedRows.batch)))
                    RETURNING app_id, push_id, token, channel_id, status, reason, apns_id, apns_unique_id, priority, sent_at),
                copied AS (
                    INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, reason, apns_id, apns_unique_id, priority, sent_at)
                    SELECT * FROM moved RETURNING sent_at)
                SELECT count(*)::int, min(sent_at) FROM copied
                """,
                logger: self.logger)
            return try await rows.decode((Int, Date?).self).array().first ?? (0, nil)
        }
    }

    /// PostgreSQL's estimate of the old table's rows.
    private func estimatedRows() async throws(StoreError) -> Int {
        try await StoreError.mapping {
            try await self.client.query(
                "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = to_regclass(\(Self.table))", logger: self.logger
            ).decode(Int64.self).array().first.map(Int.init) ?? 0
        }
    }
}
