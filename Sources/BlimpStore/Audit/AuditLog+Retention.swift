import Foundation
import PostgresNIO

extension AuditLog {
    /// Deletes entries recorded before their app's cutoff, `cutoffs` for apps with an audit retention of their own and
    /// `defaultCutoff` for the others and for deployment-level entries: app by app in batches through
    /// `audit_events_by_app` (``BatchedDelete``) until `budget` is spent. Returns how many went.
    public func deleteOld(
        defaultCutoff: Date, cutoffs: [Int64: Date], budget: Duration, batchSize: Int = BatchedDelete.size
    ) async throws(StoreError) -> Int {
        let apps: [Int64?] = try await BatchedDelete.appIDs(self.client, logger: self.logger) + [nil]
        return try await BatchedDelete.run(over: apps, size: batchSize, budget: budget) { appID, limit in
            let cutoff = appID.flatMap { cutoffs[$0] } ?? defaultCutoff
            // The app id is a number, written into the text; deployment-level entries have none.
            let app = appID.map { "app_id = \($0)" } ?? "app_id IS NULL"
            return try await BatchedDelete.count(
                """
                WITH gone AS (
                    DELETE FROM audit_events
                    WHERE id = ANY(ARRAY(SELECT id FROM audit_events WHERE \(unescaped: app) AND at < \(cutoff) LIMIT \(limit)))
                    RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                on: self.client, logger: self.logger)
        }
    }
}
