import Foundation
import Logging
import PostgresNIO

/// The idempotency keys ``PushIntake`` claims (`push_requests`), as the janitor sees them: each returns its first
/// answer for ``window``, then goes.
public struct IdempotencyKeys: Sendable {
    let client: PostgresClient
    let logger: Logger
    let now: @Sendable () -> Date

    /// How long a key returns its first answer.
    public static let window: TimeInterval = 24 * 3600

    public init(client: PostgresClient, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
    }

    /// Deletes the keys older than ``window`` (``Janitor`` calls it), app by app in batches (``BatchedDelete``) until
    /// `budget` is spent; returns how many went.
    public func deleteExpired(budget: Duration, batchSize: Int = BatchedDelete.size) async throws(StoreError) -> Int {
        let cutoff = self.now().addingTimeInterval(-Self.window)
        let apps = try await BatchedDelete.appIDs(self.client, logger: self.logger)
        return try await BatchedDelete.run(over: apps, size: batchSize, budget: budget) { appID, limit in
            try await BatchedDelete.count(
                """
                WITH gone AS (
                    DELETE FROM push_requests
                    WHERE ctid = ANY(ARRAY(
                            SELECT ctid FROM push_requests WHERE app_id = \(appID) AND created_at < \(cutoff) LIMIT \(limit)))
                      AND app_id = \(appID) AND created_at < \(cutoff)
                    RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                on: self.client, logger: self.logger)
        }
    }
}
