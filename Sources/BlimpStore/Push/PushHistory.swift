import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Finished pushes as the janitor sees them: each is kept, with its parts and report, for its app's push retention
/// (``RetentionPolicy``) counted from when it finished, then deleted. Unfinished pushes are never deleted.
public struct PushHistory: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Deletes the pushes (done, superseded, failed or cancelled) that finished before their app's cutoff, `cutoffs`
    /// for apps with a retention of their own and `defaultCutoff` for the others, with their parts: app by app in
    /// batches through `pushes_finished` (``BatchedDelete``) until `budget` is spent. Returns how many pushes went.
    public func deleteFinished(
        defaultCutoff: Date, cutoffs: [Int64: Date], budget: Duration, batchSize: Int = BatchedDelete.size
    ) async throws(StoreError) -> Int {
        try await BatchedDelete.byApp(
            cutoffs: cutoffs, defaultCutoff: defaultCutoff, size: batchSize, budget: budget, client: self.client, logger: self.logger
        ) { appID, cutoff, limit in
            try await BatchedDelete.count(
                """
                WITH gone AS (
                    DELETE FROM pushes
                    WHERE ctid = ANY(ARRAY(
                            SELECT ctid FROM pushes
                            WHERE app_id = \(appID) AND finished_at < \(cutoff) AND state IN \(unescaped: Self.finished) LIMIT \(limit)))
                      AND app_id = \(appID) AND finished_at < \(cutoff) AND state IN \(unescaped: Self.finished)
                    RETURNING push_id),
                parts AS (
                    DELETE FROM push_parts WHERE app_id = \(appID) AND push_id = ANY(ARRAY(SELECT push_id FROM gone)))
                SELECT count(*)::int FROM gone
                """,
                on: self.client, logger: self.logger)
        }
    }

    /// The states of a finished push, as SQL.
    private static let finished = "(" + PushState.allCases.filter(\.isFinished).map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")"
}
