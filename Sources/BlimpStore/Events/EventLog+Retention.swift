import BlimpCore
import Foundation
import PostgresNIO

extension EventLog {
    /// Deletes events that occurred before their app's cutoff, `cutoffs` for apps with an event retention of their own
    /// and `defaultCutoff` for the others, app by app in batches (``BatchedDelete``) until `budget` is spent; returns
    /// how many went. A batch is the next rows of the app's log in offset order (its primary key), of which those
    /// older than the cutoff go: offsets follow time but for the length of a transaction, so a batch that finds none
    /// to delete has reached what is kept, without reading it. The last offset deleted is kept (`event_trims`):
    /// ``trimmed(appID:)``.
    public func deleteOld(
        defaultCutoff: Date, cutoffs: [Int64: Date], budget: Duration, batchSize: Int = BatchedDelete.size
    ) async throws(StoreError) -> Int {
        try await BatchedDelete.byApp(
            cutoffs: cutoffs, defaultCutoff: defaultCutoff, size: batchSize, budget: budget, client: self.client, logger: self.logger
        ) { appID, cutoff, limit in
            try await BatchedDelete.count(
                """
                WITH gone AS (
                         DELETE FROM events
                         WHERE app_id = \(appID) AND occurred_at < \(cutoff)
                           AND (xid, id) IN (SELECT xid, id FROM events WHERE app_id = \(appID) ORDER BY xid, id LIMIT \(limit))
                         RETURNING xid, id),
                     marked AS (
                         INSERT INTO event_trims (app_id, xid, id)
                         SELECT \(appID), xid, id FROM gone ORDER BY xid DESC, id DESC LIMIT 1
                         ON CONFLICT (app_id) DO UPDATE SET xid = EXCLUDED.xid, id = EXCLUDED.id
                         WHERE (event_trims.xid, event_trims.id) < (EXCLUDED.xid, EXCLUDED.id))
                SELECT count(*)::int FROM gone
                """,
                on: self.client, logger: self.logger)
        }
    }

    /// The last event of the app the janitor deleted, if it has deleted any: a stream resuming below it may have
    /// missed events.
    public func trimmed(appID: Int64) async throws(StoreError) -> EventOffset? {
        let row = try await StoreError.mapping {
            try await self.client.query("SELECT xid::text, id FROM event_trims WHERE app_id = \(appID)", logger: self.logger)
                .decode((String, Int64).self).array().first
        }
        return row.flatMap { row in UInt64(row.0).map { EventOffset(transaction: $0, id: row.1) } }
    }
}
