import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// What workers read and write in PostgreSQL: claiming pushes under a lease, resolving their targets in keyset
/// batches, and recording each batch's outcomes with the fan-out's cursor in one transaction.
public struct DispatchStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// The channel workers LISTEN on; the API notifies it when it queues pushes.
    public static let channel = "blimp_pushes"

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    // MARK: - Claiming

    /// Claims the oldest push that is ready: queued, or sending under an expired lease (its worker died), and the
    /// first unfinished one of its Live Activity name, so that a name's pushes go out in acceptance order (which
    /// their timestamps follow: the intake makes them strictly increasing per name).
    public func claim(worker: String, now: Date, lease: Duration) async throws(StoreError) -> ClaimedPush? {
        let until = now.addingTimeInterval(TimeInterval(lease.components.seconds))
        return try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                WITH next AS (
                    SELECT p.app_id, p.push_id FROM pushes p
                    WHERE p.state IN ('queued', 'sending') AND p.not_before <= \(now)
                      AND (p.state = 'queued' OR p.lease_expires_at < \(now))
                      AND NOT EXISTS (
                          SELECT 1 FROM pushes q
                          WHERE q.app_id = p.app_id AND q.activity_name = p.activity_name
                            AND q.state IN ('queued', 'sending') AND q.aps_timestamp < p.aps_timestamp)
                    ORDER BY p.accepted_at
                    LIMIT 1
                    FOR UPDATE SKIP LOCKED)
                UPDATE pushes SET state = 'sending', claimed_by = \(worker), lease_expires_at = \(until),
                                  started_at = coalesce(started_at, \(now)), attempts = attempts + 1
                FROM next WHERE pushes.app_id = next.app_id AND pushes.push_id = next.push_id
                RETURNING pushes.app_id, pushes.push_id, pushes.kind, pushes.event, pushes.activity_name,
                          pushes.attributes_type, pushes.audience::text, pushes.apns_body, pushes.push_type,
                          pushes.priority, pushes.collapse_id, pushes.expires_at, pushes.alerting,
                          pushes.cursor_channel_id, pushes.counts::text
                """,
                logger: self.logger
            )
            typealias Row = (Int64, UUID, String, String?, String?, String?, String, String, String, Int16, String?, Date?, Bool, UUID?, String)
            for try await row in rows.decode(Row.self) {
                let kind: ClaimedPush.Kind
                if row.2 == "live_activity", let event = row.3.flatMap(LiveActivityNotification.Event.init(rawValue:)), let name = row.4 {
                    kind = .liveActivity(event, name: name, attributesType: row.5)
                } else {
                    kind = .alert
                }
                // An end's own dismissal date, read once from its body (the API checked it is a whole number).
                var dismissalDate: Date?
                if case .liveActivity(.end, _, _) = kind, case .number(let seconds)? = try RawJSONParser.parse(row.7.utf8)["aps"]?["dismissal-date"] {
                    dismissalDate = Double(seconds).map(Date.init(timeIntervalSince1970:))
                }
                return ClaimedPush(
                    appID: row.0, pushID: row.1, kind: kind, audience: try Audience.parse(try RawJSONParser.parse(row.6.utf8)),
                    body: Array(row.7.utf8), dismissalDate: dismissalDate, pushType: APNsPushType(rawValue: row.8) ?? .alert, priority: Int(row.9),
                    collapseID: row.10, expiresAt: row.11, isAlerting: row.12,
                    cursor: row.13 ?? ClaimedPush.start, counts: PushCounts(try RawJSONParser.parse(row.14.utf8)))
            }
            return nil
        }
    }

    /// Whether a newer update or end of the push's name is waiting: then the rest of this update is superseded,
    /// because the device shows only the newest state.
    public func isSuperseded(_ push: ClaimedPush) async throws(StoreError) -> Bool {
        guard case .liveActivity(.update, let name, _) = push.kind else { return false }
        return try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT EXISTS (
                    SELECT 1 FROM pushes q, pushes p
                    WHERE p.app_id = \(push.appID) AND p.push_id = \(push.pushID)
                      AND q.app_id = p.app_id AND q.activity_name = \(name) AND q.state = 'queued'
                      AND q.event IN ('update', 'end') AND q.aps_timestamp > p.aps_timestamp)
                """,
                logger: self.logger
            )
            return try await rows.decode(Bool.self).array().first ?? false
        }
    }

    // MARK: - Targets

    /// The next `limit` targets after the push's cursor, in channel order: for an update or end, the update tokens
    /// of the name's active activities (tracked less than 8 hours ago); for a start, the push-to-start tokens of its
    /// attributes type; for an alert, the opted-in channels' device tokens. Always on channels in the audience.
    /// (The cursor bounds both sides of each join: without it on `channels`, a merge join reads that table from
    /// its start for every batch.)
    public func targets(of push: ClaimedPush, limit: Int, now: Date) async throws(StoreError) -> [DispatchTarget] {
        // $1 to $3 are shared; each kind binds what its query reads after them.
        var bindings = PostgresBindings()
        bindings.append(push.appID)
        bindings.append(push.cursor)
        bindings.append(limit)
        let hourAgo = now.addingTimeInterval(-3600)
        let updatable = now.addingTimeInterval(-LiveActivityLifetime.updatable)
        let sql: String
        switch push.kind {
        case .liveActivity(.start, let name, let attributesType):
            bindings.append(attributesType ?? "")
            bindings.append(name)
            bindings.append(updatable)
            bindings.append(hourAgo)
            let filter = AudienceFilter(push.audience, channel: "s.channel_id", appID: push.appID, after: bindings)
            bindings = filter.bindings
            sql = """
                SELECT s.channel_id, s.token, c.frequent_pushes_enabled, 0,
                       EXISTS (SELECT 1 FROM live_activities la WHERE la.app_id = $1 AND la.channel_id = s.channel_id
                               AND la.name = $5 AND la.state = 'active' AND la.started_at > $6),
                       (SELECT count(*)::int FROM delivery_outcomes o WHERE o.app_id = $1 AND o.token = s.token
                        AND o.status = 200 AND o.sent_at > $7)
                FROM push_to_start_tokens s JOIN channels c ON c.app_id = s.app_id AND c.channel_id = s.channel_id
                WHERE s.app_id = $1 AND s.attributes_type = $4 AND s.token IS NOT NULL AND s.channel_id > $2
                  AND c.channel_id > $2 AND c.installed AND \(filter.sql)
                ORDER BY s.channel_id LIMIT $3
                """
        case .liveActivity(_, let name, _):
            bindings.append(name)
            bindings.append(updatable)
            // Priority-10 sends in the last hour matter only to a push that asks for priority 10.
            var recentPriority10 = "0"
            if push.priority == 10 {
                bindings.append(hourAgo)
                recentPriority10 = """
                    (SELECT count(*)::int FROM delivery_outcomes o WHERE o.app_id = $1 AND o.token = la.token
                     AND o.priority = 10 AND o.status = 200 AND o.sent_at > $6)
                    """
            }
            let filter = AudienceFilter(push.audience, channel: "la.channel_id", appID: push.appID, after: bindings)
            bindings = filter.bindings
            sql = """
                SELECT la.channel_id, la.token, c.frequent_pushes_enabled, \(recentPriority10), false, 0
                FROM live_activities la JOIN channels c ON c.app_id = la.app_id AND c.channel_id = la.channel_id
                WHERE la.app_id = $1 AND la.name = $4 AND la.state = 'active' AND la.started_at > $5
                  AND la.channel_id > $2 AND c.channel_id > $2 AND \(filter.sql)
                ORDER BY la.channel_id LIMIT $3
                """
        case .alert:
            let filter = AudienceFilter(push.audience, channel: "c.channel_id", appID: push.appID, after: bindings)
            bindings = filter.bindings
            sql = """
                SELECT c.channel_id, c.push_address, c.frequent_pushes_enabled, 0, false, 0
                FROM channels c
                WHERE c.app_id = $1 AND c.installed AND c.opt_in AND c.push_address IS NOT NULL AND c.channel_id > $2
                  AND \(filter.sql)
                ORDER BY c.channel_id LIMIT $3
                """
        }
        let query = PostgresQuery(unsafeSQL: sql, binds: bindings)
        return try await StoreError.mapping {
            let rows = try await self.client.query(query, logger: self.logger)
            var targets: [DispatchTarget] = []
            for try await (channel, token, frequent, recent, active, starts) in rows.decode((UUID, String, Bool, Int, Bool, Int).self) {
                targets.append(DispatchTarget(
                    channelID: channel, token: token, frequentPushes: frequent, recentPriority10: recent,
                    alreadyActive: active, recentStarts: starts))
            }
            return targets
        }
    }

    /// Update tokens of the name's ended activities in the audience: what an update skips (`skipped_ended`).
    public func endedTargets(of push: ClaimedPush) async throws(StoreError) -> Int {
        guard case .liveActivity(.update, let name, _) = push.kind else { return 0 }
        var bindings = PostgresBindings()
        bindings.append(push.appID)
        bindings.append(name)
        let filter = AudienceFilter(push.audience, channel: "la.channel_id", appID: push.appID, after: bindings)
        bindings = filter.bindings
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT count(*)::int FROM live_activities la
                WHERE la.app_id = $1 AND la.name = $2 AND la.state = 'ended' AND la.token IS NOT NULL AND \(filter.sql)
                """,
            binds: bindings)
        return try await StoreError.mapping {
            try await self.client.query(query, logger: self.logger).decode(Int.self).array().first ?? 0
        }
    }

    // MARK: - Recording

    /// What APNs answered for one target, and what follows from it.
    public struct Outcome: Sendable {
        public var target: DispatchTarget
        /// The HTTP status; 0 when no answer came.
        public var status: Int
        public var reason: String?
        public var apnsID: String?
        public var priority: Int
        /// When APNs said the token is dead: it is removed unless registered again after this time
        /// (`distantFuture` when APNs gave no 410 timestamp: dead whenever it was registered).
        public var deadSince: Date?

        public init(target: DispatchTarget, status: Int, reason: String?, apnsID: String?, priority: Int, deadSince: Date? = nil) {
            self.target = target
            self.status = status
            self.reason = reason
            self.apnsID = apnsID
            self.priority = priority
            self.deadSince = deadSince
        }
    }

    /// Records a batch in one transaction: its outcomes, the tokens APNs reported dead (a token registered again
    /// after a 410's timestamp stays), the activities an end reached, and the push's cursor, counts and a renewed
    /// lease. Returns `false`, recording nothing, when the worker no longer holds the push (its lease expired and
    /// another took it).
    public func record(
        _ outcomes: [Outcome],
        of push: ClaimedPush,
        worker: String,
        now: Date,
        lease: Duration
    ) async throws(StoreError) -> Bool {
        let until = now.addingTimeInterval(TimeInterval(lease.components.seconds))
        var pruned: [RawJSON] = []
        for outcome in outcomes {
            guard let since = outcome.deadSince else { continue }
            pruned.append(.object([
                .init("token", .string(outcome.target.token)),
                .init("channel_id", .string(outcome.target.channelID.lowercaseString)),
                .init("since", .number(String(since.timeIntervalSince1970))),
            ]))
        }
        let ended = outcomes.filter { $0.status == 200 }.map(\.target.channelID)
        return try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let held = try await connection.query(
                    """
                    UPDATE pushes SET cursor_channel_id = \(push.cursor), counts = \(push.counts.json.text)::jsonb,
                                      lease_expires_at = \(until)
                    WHERE app_id = \(push.appID) AND push_id = \(push.pushID) AND claimed_by = \(worker) AND state = 'sending'
                    RETURNING 1
                    """,
                    logger: self.logger
                ).decode(Int.self).array()
                guard !held.isEmpty else { return false }
                if !outcomes.isEmpty {
                    // Columns as arrays: cheaper to send and read than JSON rows, thousands at a time.
                    try await connection.query(
                        """
                        INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, reason, apns_id, priority, sent_at)
                        SELECT \(push.appID), \(push.pushID), token, channel_id, status, NULLIF(reason, ''),
                               NULLIF(apns_id, '')::uuid, priority, \(now)
                        FROM unnest(\(outcomes.map(\.target.token))::text[], \(outcomes.map(\.target.channelID))::uuid[],
                                    \(outcomes.map { Int16($0.status) })::smallint[], \(outcomes.map { $0.reason ?? "" })::text[],
                                    \(outcomes.map { $0.apnsID ?? "" })::text[], \(outcomes.map { Int16($0.priority) })::smallint[])
                             AS r (token, channel_id, status, reason, apns_id, priority)
                        """,
                        logger: self.logger)
                }
                if !pruned.isEmpty { try await Self.prune(pruned, of: push, on: connection, logger: self.logger) }
                if case .liveActivity(.end, let name, _) = push.kind, !ended.isEmpty {
                    try await connection.query(
                        """
                        UPDATE live_activities SET state = 'ended', ended_at = \(now),
                               dismiss_at = \(push.dismissalDate ?? now.addingTimeInterval(LiveActivityLifetime.dismissedAfterEnd))
                        WHERE app_id = \(push.appID) AND name = \(name) AND channel_id = ANY(\(ended)) AND state = 'active'
                        """,
                        logger: self.logger)
                }
                return true
            }
        }
    }

    /// Removes the tokens APNs reported dead, unless registered again after the report's time (`since`).
    private static func prune(_ pruned: [RawJSON], of push: ClaimedPush, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = RawJSON.array(pruned).text
        let query: PostgresQuery
        switch push.kind {
        case .liveActivity(.start, _, _):
            query = """
                UPDATE push_to_start_tokens t SET token = NULL
                FROM jsonb_to_recordset(\(rows)::jsonb) AS r (token text, channel_id uuid, since double precision)
                WHERE t.app_id = \(push.appID) AND t.channel_id = r.channel_id AND t.token = r.token
                  AND t.updated_at <= to_timestamp(r.since)
                """
        case .liveActivity:
            query = """
                DELETE FROM live_activities t
                USING jsonb_to_recordset(\(rows)::jsonb) AS r (token text, channel_id uuid, since double precision)
                WHERE t.app_id = \(push.appID) AND t.channel_id = r.channel_id AND t.token = r.token
                  AND t.updated_at <= to_timestamp(r.since)
                """
        case .alert:
            query = """
                UPDATE channels t SET push_address = NULL, opt_in = false
                FROM jsonb_to_recordset(\(rows)::jsonb) AS r (token text, channel_id uuid, since double precision)
                WHERE t.app_id = \(push.appID) AND t.channel_id = r.channel_id AND t.push_address = r.token
                  AND t.last_registration <= to_timestamp(r.since)
                """
        }
        try await connection.query(query, logger: logger)
    }

    /// Marks the push finished (`done`, `superseded` or `failed`) with its final counts.
    public func finish(_ push: ClaimedPush, state: String, worker: String, now: Date) async throws(StoreError) {
        try await StoreError.mapping {
            try await self.client.query(
                """
                UPDATE pushes SET state = \(state), finished_at = \(now), counts = \(push.counts.json.text)::jsonb,
                                  lease_expires_at = NULL, cursor_channel_id = \(push.cursor)
                WHERE app_id = \(push.appID) AND push_id = \(push.pushID) AND claimed_by = \(worker)
                """,
                logger: self.logger)
        }
    }

    /// Gives the push back at once (a worker shutting down): another worker resumes it from its cursor.
    public func release(_ push: ClaimedPush, worker: String, now: Date) async throws(StoreError) {
        try await StoreError.mapping {
            try await self.client.query(
                """
                UPDATE pushes SET lease_expires_at = \(now)
                WHERE app_id = \(push.appID) AND push_id = \(push.pushID) AND claimed_by = \(worker) AND state = 'sending'
                """,
                logger: self.logger)
        }
    }
}
