import BlimpCore
import Foundation
import Logging
import PostgresNIO

extension DispatchStore {
    /// Records that the worker's attempt at a part failed for `reason`. The part is tried again after the policy's
    /// delay (by any worker); when the reason is permanent or the attempts are spent, the part fails, and with it its
    /// push: the push ends `failed` with the reason and its counts so far, its other unfinished parts are cancelled,
    /// and the name's later pushes go on. Returns the part's new state, `nil` when the worker no longer held it.
    @discardableResult
    public func partFailed(
        appID: Int64, pushID: UUID, part: Int16, reason: String, permanent: Bool, worker: String, policy: PartRetryPolicy
    ) async throws(StoreError) -> PushState? {
        let state = try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection -> PushState? in
                let held = try await connection.query(
                    """
                    SELECT attempts FROM push_parts
                    WHERE \(held: HeldPart(appID: appID, pushID: pushID, part: part, worker: worker))
                    FOR UPDATE
                    """,
                    logger: self.logger
                ).decode(Int.self).array()
                guard let attempts = held.first.map({ $0 + 1 }) else { return nil }
                if !permanent, let delay = policy.delay(afterFailedAttempts: attempts) {
                    try await connection.query(
                        """
                        UPDATE push_parts SET state = 'queued', attempts = \(attempts), claimed_by = NULL, lease_expires_at = NULL,
                                              retry_at = now() + make_interval(secs => \(Double(delay.components.seconds)))
                        WHERE app_id = \(appID) AND push_id = \(pushID) AND part = \(part)
                        """,
                        logger: self.logger)
                    return .queued
                }
                try await connection.query(
                    """
                    UPDATE push_parts SET state = 'failed', attempts = \(attempts), lease_expires_at = NULL
                    WHERE app_id = \(appID) AND push_id = \(pushID) AND part = \(part)
                    """,
                    logger: self.logger)
                try await Self.failPush(appID: appID, pushID: pushID, reason: reason, on: connection, logger: self.logger)
                return PushState.failed
            }
        }
        if state == .failed { PushMetrics.finished(.failed) }
        return state
    }

    /// Ends the push `failed` with `reason` and the counts its parts reached; cancels its unfinished parts.
    static func failPush(appID: Int64, pushID: UUID, reason: String, on connection: PostgresConnection, logger: Logger) async throws {
        let parts = try await Self.lockedParts(appID: appID, pushID: pushID, on: connection, logger: logger)
        try await connection.query(
            """
            UPDATE push_parts SET state = 'cancelled', lease_expires_at = NULL
            WHERE app_id = \(appID) AND push_id = \(pushID) AND state IN ('queued', 'sending')
            """,
            logger: logger)
        try await connection.query(
            """
            WITH finished AS (
                UPDATE pushes SET state = 'failed', failure_reason = \(reason), finished_at = now(), counts = \(parts.counts.json.text)::jsonb
                WHERE app_id = \(appID) AND push_id = \(pushID) AND state IN ('queued', 'sending')
                RETURNING \(unescaped: EventLog.finishedColumns(of: "pushes")))
            \(unescaped: EventLog.finishedEvents)
            """,
            logger: logger)
    }
}
