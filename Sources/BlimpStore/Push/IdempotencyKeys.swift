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

    /// Deletes the keys older than ``window`` (``Janitor`` calls it); returns how many went.
    public func deleteExpired() async throws(StoreError) -> Int {
        let cutoff = self.now().addingTimeInterval(-Self.window)
        return try await StoreError.mapping {
            let rows = try await self.client.query(
                "DELETE FROM push_requests WHERE created_at < \(cutoff) RETURNING 1", logger: self.logger)
            return try await rows.collect().count
        }
    }
}
