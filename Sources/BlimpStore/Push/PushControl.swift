import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// What may be done to a push after it was accepted: cancel it while it waits or after it failed, and try a failed
/// one again. Scoped to one app, like every store; each change is recorded in the audit trail in its transaction.
public struct PushControl: Sendable {
    let client: Database
    let logger: Logger
    /// The clock the audit trail's entries are stamped by.
    let now: @Sendable () -> Date

    public init(client: Database, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
    }

    /// Whether the change was made; otherwise the state that forbids it.
    public enum Outcome: Sendable, Equatable {
        case changed
        case notAllowed(PushState)
    }

    /// Cancels a `queued` or `failed` push: no worker will take it (up). A push being sent, or finished otherwise,
    /// is left as it is.
    public func cancel(_ pushID: UUID, appID: Int64, by origin: AuditOrigin) async throws(StoreError) -> Outcome {
        let entry = origin.entry(appID: appID, .pushCancelled, subject: pushID.lowercaseString)
        let outcome = try await self.change(pushID, appID: appID, allowedFrom: [.queued, .failed], recording: entry) { connection in
            try await connection.query(
                """
                UPDATE push_parts SET state = 'cancelled', lease_expires_at = NULL
                WHERE app_id = \(appID) AND push_id = \(pushID) AND state = 'queued'
                """,
                logger: self.logger)
            try await connection.query(
                """
                WITH finished AS (
                    UPDATE pushes SET state = 'cancelled', finished_at = now(),
                                      failure_reason = coalesce(failure_reason || ' (then cancelled)', 'cancelled')
                    WHERE app_id = \(appID) AND push_id = \(pushID)
                    RETURNING \(unescaped: EventLog.finishedColumns(of: "pushes")))
                \(unescaped: EventLog.finishedEvents)
                """,
                logger: self.logger)
        }
        if outcome == .changed { PushMetrics.finished(.cancelled) }
        return outcome
    }

    /// Tries a `failed` push again: its failed and cancelled parts resume from their cursors with fresh attempts (a
    /// push that failed before any part was made is queued again). Its timestamp and its place in its activities'
    /// order stay: an update is skipped for a device already sent a newer one.
    public func retry(_ pushID: UUID, appID: Int64, by origin: AuditOrigin) async throws(StoreError) -> Outcome {
        let entry = origin.entry(appID: appID, .pushRetried, subject: pushID.lowercaseString)
        return try await self.change(pushID, appID: appID, allowedFrom: [.failed], recording: entry) { connection in
            let parts = try await connection.query(
                """
                UPDATE push_parts SET state = 'queued', attempts = 0, retry_at = NULL, claimed_by = NULL, lease_expires_at = NULL
                WHERE app_id = \(appID) AND push_id = \(pushID) AND state IN ('failed', 'cancelled')
                RETURNING 1
                """,
                logger: self.logger
            ).decode(Int.self).array()
            try await connection.query(
                """
                UPDATE pushes SET state = \(parts.isEmpty ? PushState.queued.rawValue : PushState.sending.rawValue),
                                  failure_reason = NULL, finished_at = NULL
                WHERE app_id = \(appID) AND push_id = \(pushID)
                """,
                logger: self.logger)
            try await connection.query("SELECT pg_notify(\(DispatchStore.channel), '')", logger: self.logger)
        }
    }

    /// Runs `body` in a transaction holding the push's row, when the push is in one of `states`, and records `entry`.
    private func change(
        _ pushID: UUID, appID: Int64, allowedFrom states: Set<PushState>, recording entry: AuditEntry,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Void
    ) async throws(StoreError) -> Outcome {
        let at = self.now()
        return try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection -> Outcome in
                let rows = try await connection.query(
                    "SELECT state FROM pushes WHERE app_id = \(appID) AND push_id = \(pushID) FOR UPDATE", logger: self.logger
                ).decode(String.self).array()
                guard let text = rows.first else { throw StoreError.notFound }
                guard let state = PushState(rawValue: text) else { throw StoreError.database(reason: "unknown push state \(text)") }
                guard states.contains(state) else { return .notAllowed(state) }
                try await body(connection)
                try await AuditLog.record([entry], at: at, on: connection, logger: self.logger)
                return .changed
            }
        }
    }
}
