import Foundation
import PostgresNIO

extension DispatchStore {
    /// The whole deployment's queue: pushes waiting for a worker, and when the oldest of them was accepted.
    public struct Queue: Sendable, Equatable {
        public var depth: Int
        public var oldestAcceptedAt: Date?
    }

    /// Every app's queued pushes (a range of the unfinished pushes' index).
    public func queue() async throws(StoreError) -> Queue {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                "SELECT count(*)::int, min(accepted_at) FROM pushes WHERE state = 'queued'", logger: self.logger
            ).decode((Int, Date?).self).array()
            return Queue(depth: rows.first?.0 ?? 0, oldestAcceptedAt: rows.first?.1)
        }
    }
}
