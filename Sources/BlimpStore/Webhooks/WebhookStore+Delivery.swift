import BlimpCore
import Foundation
import PostgresNIO

extension WebhookStore {
    /// An endpoint a worker claimed: where and what to deliver, with the secrets that sign it.
    public struct ClaimedEndpoint: Sendable {
        public var id: String
        public var appID: Int64
        public var url: String
        /// `nil`: every type.
        public var types: Set<EventType>?
        /// The current secret, then the previous one while it still signs.
        public var secrets: [WebhookSecret]
        /// The last event delivered or passed over.
        public var cursor: EventOffset
        /// The batch being delivered, fixed at its first attempt.
        public var batch: Batch?
        /// Failed attempts in a row.
        public var attempts: Int
        public var failingSince: Date?
    }

    /// A batch of events as first sent: its `webhook-id`, its body, how many events it holds, and the last of them.
    public struct Batch: Sendable, Equatable {
        public var id: String
        public var body: Data
        public var events: Int
        public var through: EventOffset

        public init(id: String, body: Data, events: Int, through: EventOffset) {
            self.id = id
            self.body = body
            self.events = events
            self.through = through
        }
    }

    /// What a claim reads of an endpoint, each column by name.
    enum Claimed: String, SelectedColumn {
        case id, appID = "app_id", url, types, secret = "secret_sealed", previousSecret = "previous_secret_sealed"
        case previousSigns = "previous_signs", cursorXID = "cursor_xid", cursorID = "cursor_id", batchID = "batch_id"
        case batchBody = "batch_body", batchEvents = "batch_events", batchThroughXID = "batch_through_xid", batchThroughID = "batch_through_id"
        case attempts, failingSince = "failing_since"

        var expression: String {
            switch self {
            case .previousSigns: "coalesce(w.previous_secret_until > now(), false)"
            case .cursorXID, .batchThroughXID: "w.\(self.rawValue)::text"
            default: "w.\(self.rawValue)"
            }
        }
    }

    /// Claims up to `limit` enabled endpoints that are due and have something to send, for `lease`, oldest due first;
    /// their secrets opened with `serverKey`. An endpoint whose secret does not open is skipped, and logged.
    public func claimDue(worker: String, lease: Duration, limit: Int, serverKey: ServerKey, now: Date) async throws(StoreError) -> [ClaimedEndpoint] {
        let rows = try await StoreError.mapping {
            try await self.client.query(
                """
                WITH due AS (
                    SELECT app_id, id FROM webhooks w
                    WHERE enabled AND next_attempt_at <= \(now) AND (lease_expires_at IS NULL OR lease_expires_at < now())
                      -- An endpoint with nothing to send is not claimed (nor written): a batch pending, or an event
                      -- after its place that a stream could read (EventLog).
                      AND (batch_id IS NOT NULL OR EXISTS (
                          SELECT 1 FROM events e
                          WHERE e.app_id = w.app_id AND (e.xid, e.id) > (w.cursor_xid, w.cursor_id)
                            AND e.xid < pg_snapshot_xmin(pg_current_snapshot())))
                    ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED),
                claimed AS (
                    UPDATE webhooks w SET claimed_by = \(worker), lease_expires_at = now() + make_interval(secs => \(Double(lease.components.seconds)))
                    FROM due WHERE w.app_id = due.app_id AND w.id = due.id
                    RETURNING w.*)
                SELECT \(unescaped: Claimed.selectList) FROM claimed w
                """,
                logger: self.logger
            ).collect()
        }
        var claimed: [ClaimedEndpoint] = []
        for row in rows {
            do {
                claimed.append(try Self.claimed(NamedRow(row), serverKey: serverKey))
            } catch {
                self.logger.error("a webhook cannot be read", metadata: ["error": "\(error)"])
            }
        }
        return claimed
    }

    private static func claimed(_ row: NamedRow<Claimed>, serverKey: ServerKey) throws -> ClaimedEndpoint {
        let id: String = try row.decode(.id)
        let context = SealedSecret.webhookSecret(id: id).context
        var secrets = [WebhookSecret(bytes: try serverKey.open(try row.decode(.secret), boundTo: context))]
        if try row.decode(.previousSigns), let previous: Data = try row.decode(.previousSecret) {
            secrets.append(WebhookSecret(bytes: try serverKey.open(previous, boundTo: context)))
        }
        let types: [String]? = try row.decode(.types)
        var batch: Batch?
        if let batchID: String = try row.decode(.batchID) {
            batch = Batch(
                id: batchID, body: try row.decode(.batchBody), events: try row.decode(.batchEvents),
                through: try Self.offset(try row.decode(.batchThroughXID), try row.decode(.batchThroughID)))
        }
        return ClaimedEndpoint(
            id: id, appID: try row.decode(.appID), url: try row.decode(.url), types: types.map { Set($0.compactMap(EventType.init(rawValue:))) },
            secrets: secrets, cursor: try Self.offset(try row.decode(.cursorXID), try row.decode(.cursorID)), batch: batch,
            attempts: try row.decode(.attempts), failingSince: try row.decode(.failingSince))
    }

    private static func offset(_ transaction: String, _ id: Int64) throws -> EventOffset {
        guard let transaction = UInt64(transaction) else { throw StoreError.database(reason: "a webhook's offset is not a transaction") }
        return EventOffset(transaction: transaction, id: id)
    }

    /// Fixes the endpoint's next batch, before its first attempt.
    public func fix(_ batch: Batch, of endpoint: ClaimedEndpoint, worker: String) async throws(StoreError) {
        try await self.update(
            endpoint, worker: worker,
            """
            batch_id = \(batch.id), batch_body = \(ByteBuffer(bytes: batch.body)), batch_events = \(batch.events),
            batch_through_xid = \(String(batch.through.transaction))::xid8, batch_through_id = \(batch.through.id)
            """)
    }

    /// Moves the endpoint past events none of its types matched, and leaves it due at `next`.
    public func pass(_ endpoint: ClaimedEndpoint, to cursor: EventOffset, next: Date, worker: String) async throws(StoreError) {
        try await self.update(
            endpoint, worker: worker,
            "cursor_xid = \(String(cursor.transaction))::xid8, cursor_id = \(cursor.id), next_attempt_at = \(next), claimed_by = NULL, lease_expires_at = NULL")
    }

    /// Records the batch delivered (`status`, a 2xx): the endpoint goes on after it at once.
    public func delivered(_ endpoint: ClaimedEndpoint, status: Int, worker: String, now: Date) async throws(StoreError) {
        try await self.update(
            endpoint, worker: worker,
            """
            cursor_xid = batch_through_xid, cursor_id = batch_through_id, delivered_events = delivered_events + batch_events,
            batch_id = NULL, batch_body = NULL, batch_events = NULL, batch_through_xid = NULL, batch_through_id = NULL,
            attempts = 0, failing_since = NULL, next_attempt_at = \(now), claimed_by = NULL, lease_expires_at = NULL
            """,
            attempt: Attempt(at: now, status: status, error: nil))
    }

    /// Records a failed attempt (`status` when the endpoint answered): the batch goes again at `next`.
    public func failed(_ endpoint: ClaimedEndpoint, status: Int?, error: String, next: Date, worker: String, now: Date) async throws(StoreError) {
        try await self.update(
            endpoint, worker: worker,
            """
            attempts = attempts + 1, failing_since = coalesce(failing_since, \(now)), next_attempt_at = \(next),
            claimed_by = NULL, lease_expires_at = NULL
            """,
            attempt: Attempt(at: now, status: status, error: error))
    }

    /// Disables the endpoint, saying why; an admin enables it again.
    public func disable(_ endpoint: ClaimedEndpoint, reason: String, status: Int?, worker: String, now: Date) async throws(StoreError) {
        try await self.update(
            endpoint, worker: worker,
            """
            enabled = false, disabled_reason = \(reason), claimed_by = NULL, lease_expires_at = NULL
            """,
            attempt: Attempt(at: now, status: status, error: reason))
        self.logger.warning("webhook disabled", metadata: ["webhook.id": "\(endpoint.id)", "reason": "\(reason)"])
    }

    /// One attempt, as `recent_attempts` keeps it.
    private struct Attempt {
        var at: Date
        var status: Int?
        var error: String?
    }

    /// Sets `assignments` on the endpoint while `worker` holds it; with `attempt`, puts it at the head of
    /// `recent_attempts`, which keeps 10, with the batch it was of.
    private func update(_ endpoint: ClaimedEndpoint, worker: String, _ assignments: PostgresQuery, attempt: Attempt? = nil) async throws(StoreError) {
        var parameters = QueryParameters(after: assignments.binds)
        var sql = assignments.sql
        if let attempt {
            // Text, empty for none: an optional has no placeholder of its own.
            let at = parameters.bind(StreamedEvent.format(attempt.at))
            let status = parameters.bind(attempt.status.map(String.init) ?? "")
            let error = parameters.bind(attempt.error ?? "")
            sql = """
                recent_attempts = jsonb_path_query_array(
                    jsonb_build_array(jsonb_build_object('at', \(at)::text, 'batch', batch_id, 'events', batch_events,
                                                         'status', NULLIF(\(status), '')::integer, 'error', NULLIF(\(error), ''))) || recent_attempts,
                    '$[0 to 9]'),
                """ + sql
        }
        let app = parameters.bind(endpoint.appID)
        let id = parameters.bind(endpoint.id)
        let holder = parameters.bind(worker)
        let query = parameters.query("UPDATE webhooks SET \(sql) WHERE app_id = \(app) AND id = \(id) AND claimed_by = \(holder)")
        try await StoreError.mapping { _ = try await self.client.query(query, logger: self.logger).collect() }
    }
}
