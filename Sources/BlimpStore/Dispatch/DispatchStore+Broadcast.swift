import BlimpCore
import Foundation
import PostgresNIO

extension DispatchStore {
    /// What APNs answered an update's or end's publish to its live activity channel (status 0: no answer), recorded
    /// on the push while its worker holds part 0, so a part resumed later does not publish again.
    public struct BroadcastOutcome: Sendable, Equatable {
        public var status: Int
        public var reason: APNsReason?
        /// The `apns-request-id` the publish was sent with (APNs echoes it).
        public var requestID: UUID
        public var publishedAt: Date

        public init(status: Int, reason: APNsReason?, requestID: UUID, publishedAt: Date) {
            self.status = status
            self.reason = reason
            self.requestID = requestID
            self.publishedAt = publishedAt
        }
    }

    /// Records the publish's outcome on the push; `false`, recording nothing, when the worker no longer holds the part.
    public func recordBroadcast(_ outcome: BroadcastOutcome, of push: ClaimedPush, worker: String) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await self.client.query(
                """
                UPDATE pushes SET broadcast_status = \(Int16(outcome.status)), broadcast_reason = \(outcome.reason?.rawValue),
                                  broadcast_request_id = \(outcome.requestID), broadcast_published_at = \(outcome.publishedAt)
                WHERE app_id = \(push.appID) AND push_id = \(push.pushID)
                  AND EXISTS (SELECT 1 FROM push_parts WHERE \(held: HeldPart(push, worker: worker)))
                RETURNING 1
                """,
                logger: self.logger
            ).decode(Int.self).array().count == 1
        }
    }
}
