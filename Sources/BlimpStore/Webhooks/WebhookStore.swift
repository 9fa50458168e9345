import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// An app's webhook endpoints (`webhooks`): created, listed, deleted, enabled again and given a new secret through the
/// API; claimed, one worker at a time under a lease, by the workers that deliver their batches
/// (`WebhookStore+Delivery`).
public struct WebhookStore: Sendable {
    let client: Database
    let logger: Logger

    /// The most endpoints an app may have.
    public static let maximumPerApp = 10
    /// How long a rotated secret still signs beside the new one.
    public static let rotationOverlap: TimeInterval = 86_400

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// An endpoint as the API and the console show it.
    public struct Endpoint: Sendable, Equatable {
        public var id: String
        public var url: String
        /// `nil`: every type.
        public var types: [String]?
        public var enabled: Bool
        public var disabledReason: String?
        public var createdAt: Date
        public var attempts: Int
        public var failingSince: Date?
        public var lastAttemptAt: Date?
        public var lastStatus: Int?
        public var lastError: String?
        public var deliveredEvents: Int64
        /// Events of the batch being delivered, if one is.
        public var pendingEvents: Int?
        /// The last 10 attempts, newest first, as stored (a JSON array of `at`, `batch`, `events`, `status`, `error`).
        public var recentAttempts: String
        /// Events of its types after those it was delivered, among the next ``backlogWindow`` of the log; `nil` where
        /// not counted (a change's answer).
        public var backlog: Int?
    }

    /// How many of the log's events after an endpoint's place its backlog count reads at most.
    public static let backlogWindow = 100_000

    /// What a read of an endpoint selects, each column by name.
    enum Column: String, SelectedColumn {
        case id, url, types, enabled, disabledReason = "disabled_reason", createdAt = "created_at", attempts
        case failingSince = "failing_since", lastAttemptAt = "last_attempt_at", lastStatus = "last_status", lastError = "last_error"
        case deliveredEvents = "delivered_events", pendingEvents = "batch_events", recentAttempts = "recent_attempts"

        var expression: String {
            switch self {
            case .recentAttempts: "w.recent_attempts::text"
            // The last attempt is the head of the recent ones.
            case .lastAttemptAt: "(w.recent_attempts -> 0 ->> 'at')::timestamptz"
            case .lastStatus: "(w.recent_attempts -> 0 ->> 'status')::integer"
            case .lastError: "w.recent_attempts -> 0 ->> 'error'"
            default: "w.\(self.rawValue)"
            }
        }
    }

    static func endpoint(_ row: NamedRow<Column>) throws(UnreadableColumn) -> Endpoint {
        Endpoint(
            id: try row.decode(.id), url: try row.decode(.url), types: try row.decode(.types), enabled: try row.decode(.enabled),
            disabledReason: try row.decode(.disabledReason), createdAt: try row.decode(.createdAt), attempts: try row.decode(.attempts),
            failingSince: try row.decode(.failingSince), lastAttemptAt: try row.decode(.lastAttemptAt),
            lastStatus: try row.decode(.lastStatus), lastError: try row.decode(.lastError), deliveredEvents: try row.decode(.deliveredEvents),
            pendingEvents: try row.decode(.pendingEvents), recentAttempts: try row.decode(.recentAttempts), backlog: nil)
    }

    /// Why an endpoint was not created.
    public enum Refusal: Error, Sendable, Equatable {
        /// The app has ``maximumPerApp`` already.
        case tooMany
    }

    /// Creates an endpoint for `url` and `types` (`nil`: every type) signing with `secret`, sealed under `serverKey`.
    /// It delivers the events committed after it was created.
    public func create(
        appID: Int64, url: String, types: [String]?, secret: WebhookSecret, serverKey: ServerKey, now: Date, by origin: AuditOrigin
    ) async throws(StoreError) -> Result<Endpoint, Refusal> {
        let id = UUID.random().lowercaseString
        let sealed = ByteBuffer(bytes: serverKey.seal(secret.bytes, boundTo: SealedSecret.webhookSecret(id: id).context))
        let entry = Self.entry(origin, appID: appID, .webhookCreated, id: id, url: url)
        return try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            // The app's row, locked: two creations at once count each other.
            _ = try await connection.query("SELECT 1 FROM apps WHERE id = \(appID) FOR UPDATE", logger: self.logger).collect()
            let rows = try await connection.query(
                """
                WITH created AS (
                    INSERT INTO webhooks (id, app_id, url, types, secret_sealed, created_at, cursor_xid, cursor_id, next_attempt_at)
                    SELECT \(id), \(appID), \(url), \(types)::text[], \(sealed), \(now), pg_snapshot_xmin(pg_current_snapshot()), 0, \(now)
                    WHERE (SELECT count(*) FROM webhooks WHERE app_id = \(appID)) < \(Self.maximumPerApp)
                    RETURNING *)
                SELECT \(unescaped: Column.selectList) FROM created w
                """,
                logger: self.logger
            ).collect()
            guard let row = rows.first else { return (.failure(.tooMany), []) }
            return (.success(try Self.endpoint(NamedRow(row))), [entry])
        }
    }

    /// The app's endpoints, oldest first, each with its backlog.
    public func list(appID: Int64) async throws(StoreError) -> [Endpoint] {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: Column.selectList),
                       (SELECT count(*) FILTER (WHERE w.types IS NULL OR ahead.type = ANY(w.types))::int
                        FROM (SELECT e.type FROM events e
                              WHERE e.app_id = w.app_id AND (e.xid, e.id) > (w.cursor_xid, w.cursor_id)
                              ORDER BY e.xid, e.id LIMIT \(Self.backlogWindow)) AS ahead) AS backlog
                FROM webhooks w WHERE w.app_id = \(appID) ORDER BY w.created_at, w.id
                """,
                logger: self.logger
            ).collect()
            return try rows.map { row in
                var endpoint = try Self.endpoint(NamedRow(row))
                endpoint.backlog = try row.makeRandomAccess()["backlog"].decode(Int.self)
                return endpoint
            }
        }
    }

    /// Deletes the endpoint; `false` when the app has none with that id.
    public func delete(appID: Int64, id: String, now: Date, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            let urls = try await connection.query(
                "DELETE FROM webhooks WHERE app_id = \(appID) AND id = \(id) RETURNING url", logger: self.logger
            ).decode(String.self).array()
            return (!urls.isEmpty, urls.map { Self.entry(origin, appID: appID, .webhookDeleted, id: id, url: $0) })
        }
    }

    /// An audit entry of the endpoint `id`, naming its URL.
    private static func entry(_ origin: AuditOrigin, appID: Int64, _ action: AuditAction, id: String, url: String) -> AuditEntry {
        origin.entry(appID: appID, action, subject: id, details: .object([.init("url", .string(url))]))
    }

    /// Enables the endpoint again, delivering from where it stopped (or from the oldest event still kept, when its
    /// backlog went past the event retention); `nil` when the app has none with that id.
    public func enable(appID: Int64, id: String, now: Date, by origin: AuditOrigin) async throws(StoreError) -> Endpoint? {
        try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            let endpoint = try await connection.query(
                """
                WITH enabled AS (
                    UPDATE webhooks w SET enabled = true, disabled_reason = NULL, attempts = 0, failing_since = NULL, next_attempt_at = \(now),
                        cursor_xid = CASE WHEN (t.xid, t.id) > (w.cursor_xid, w.cursor_id) THEN t.xid ELSE w.cursor_xid END,
                        cursor_id = CASE WHEN (t.xid, t.id) > (w.cursor_xid, w.cursor_id) THEN t.id ELSE w.cursor_id END
                    FROM (SELECT \(appID)::bigint AS app_id) AS a LEFT JOIN event_trims t ON t.app_id = a.app_id
                    WHERE w.app_id = a.app_id AND w.id = \(id)
                    RETURNING w.*)
                SELECT \(unescaped: Column.selectList) FROM enabled w
                """,
                logger: self.logger
            ).collect().first.map { row in try Self.endpoint(NamedRow(row)) }
            return (endpoint, endpoint.map { [Self.entry(origin, appID: appID, .webhookEnabled, id: id, url: $0.url)] } ?? [])
        }
    }

    /// Gives the endpoint a new secret; the old one signs beside it for ``rotationOverlap``. `false` when the app has
    /// none with that id.
    public func rotate(
        appID: Int64, id: String, to secret: WebhookSecret, serverKey: ServerKey, now: Date, by origin: AuditOrigin
    ) async throws(StoreError) -> Bool {
        let next = ByteBuffer(bytes: serverKey.seal(secret.bytes, boundTo: SealedSecret.webhookSecret(id: id).context))
        return try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            let urls = try await connection.query(
                """
                UPDATE webhooks SET previous_secret_sealed = secret_sealed, secret_sealed = \(next),
                    previous_secret_until = \(now.addingTimeInterval(Self.rotationOverlap))
                WHERE app_id = \(appID) AND id = \(id)
                RETURNING url
                """,
                logger: self.logger
            ).decode(String.self).array()
            return (!urls.isEmpty, urls.map { Self.entry(origin, appID: appID, .webhookRotated, id: id, url: $0) })
        }
    }
}
