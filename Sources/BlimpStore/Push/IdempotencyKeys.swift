import Foundation
import Logging
import PostgresNIO

/// The idempotency keys ``PushIntake`` claims (`push_requests`), as the janitor sees them: each returns its first
/// answer for ``window``, then goes.
public struct IdempotencyKeys: Sendable {
    let client: Database
    let logger: Logger
    let now: @Sendable () -> Date

    /// How long a key returns its first answer.
    public static let window: TimeInterval = 24 * 3600

    public init(client: Database, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
    }

    /// Deletes the keys older than ``window`` (``Janitor`` calls it), app by app in batches (``BatchedDelete``) until
    /// `budget` is spent; returns how many went.
    public func deleteExpired(budget: Duration, batchSize: Int = BatchedDelete.size) async throws(StoreError) -> Int {
        try await BatchedDelete.deleteOlder(
            from: "push_requests", column: "created_at", before: self.now().addingTimeInterval(-Self.window),
            budget: budget, size: batchSize, client: self.client, logger: self.logger)
    }
}
