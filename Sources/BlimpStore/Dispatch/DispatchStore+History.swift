import Foundation
import PostgresNIO

extension DispatchStore {
    /// Outcomes kept per token for admins: the newest 20, and every one of the last hour (the priority budget
    /// counts those).
    public static let outcomesKeptPerToken = 20

    /// Deletes each token's outcomes beyond the newest ``outcomesKeptPerToken`` that are over an hour old
    /// (``Janitor`` calls it); returns how many went.
    public func trimOutcomes(now: Date) async throws(StoreError) -> Int {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                WITH gone AS (
                DELETE FROM delivery_outcomes d
                USING (SELECT ctid FROM (
                           SELECT ctid, sent_at, row_number() OVER (PARTITION BY app_id, channel_id, token ORDER BY sent_at DESC) AS newest
                           FROM delivery_outcomes) ranked
                       WHERE newest > \(Self.outcomesKeptPerToken) AND sent_at < \(now.addingTimeInterval(-3600))) old
                WHERE d.ctid = old.ctid
                RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                logger: self.logger)
            return try await rows.decode(Int.self).array().first ?? 0
        }
    }
}
