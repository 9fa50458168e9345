import BlimpCore
import Foundation
import Logging
import PostgresNIO

extension DispatchStore {
    /// What became of one target: what APNs answered, and what follows from it; or why it was not sent (``skipped``).
    public struct Outcome: Sendable {
        public var target: DispatchTarget
        /// The HTTP status; 0 when no answer came.
        public var status: Int
        public var reason: APNsReason?
        public var apnsID: String?
        /// `apns-unique-id`, which APNs's sandbox sends with a 200 (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
        public var uniqueID: String?
        public var priority: APNsPriority
        /// When APNs said the token is dead: it is removed unless registered again after this time
        /// (`distantFuture` when APNs gave no 410 timestamp: dead whenever it was registered).
        public var deadSince: Date?
        /// Why the worker did not send it (status 0, no answer): it is a `SEND_SKIPPED` event, not a delivery outcome.
        public var skipped: SkipReason?

        public init(
            target: DispatchTarget, status: Int, reason: APNsReason?, apnsID: String?, uniqueID: String? = nil, priority: APNsPriority,
            deadSince: Date? = nil
        ) {
            self.target = target
            self.status = status
            self.reason = reason
            self.apnsID = apnsID
            self.uniqueID = uniqueID
            self.priority = priority
            self.deadSince = deadSince
        }

        /// A target not sent, and why.
        public static func skipped(_ target: DispatchTarget, _ reason: SkipReason, priority: APNsPriority) -> Outcome {
            var outcome = Outcome(target: target, status: 0, reason: nil, apnsID: nil, priority: priority)
            outcome.skipped = reason
            return outcome
        }

        /// ``uniqueID`` as the `uuid` column takes it: empty (NULL) unless it is a UUID, so that an odd value from a
        /// server cannot fail the batch's transaction.
        var storedUniqueID: String {
            guard let uniqueID = self.uniqueID, UUID(uuidString: uniqueID) != nil else { return "" }
            return uniqueID
        }
    }

    /// Records a batch in one transaction: its outcomes, the tokens APNs reported dead (a token registered again
    /// after a 410's timestamp stays), the activities an end reached or a start began (awaiting their token), and the
    /// part's cursor, end, counts and a renewed lease; and the parts `split` off the rest of its range, for any worker
    /// to take (they are notified). Returns `false`, recording nothing, when the worker no longer holds the part (its
    /// lease expired and another took it).
    public func record(
        _ outcomes: [Outcome],
        of push: ClaimedPush,
        split: [ChannelIDRange] = [],
        worker: String,
        now: Date,
        lease: Duration
    ) async throws(StoreError) -> Bool {
        let pruned = Self.deadTokens(in: outcomes)
        let sent = outcomes.filter { $0.status == 200 }.map(\.target.channelID)
        return try await StoreError.mapping { [pruned] in
            try await self.client.withTransaction(logger: self.logger) { connection in
                let held = try await connection.query(
                    """
                    UPDATE push_parts SET cursor_channel_id = \(push.cursor), through_channel_id = \(push.through),
                                          counts = \(push.counts.json.text)::jsonb,
                                          lease_expires_at = now() + make_interval(secs => \(Self.seconds(lease)))
                    WHERE \(held: HeldPart(push, worker: worker))
                    RETURNING 1
                    """,
                    logger: self.logger
                ).decode(Int.self).array()
                guard !held.isEmpty else { return false }
                if !split.isEmpty {
                    try await connection.query(
                        """
                        INSERT INTO push_parts (app_id, push_id, part, after_channel_id, through_channel_id, cursor_channel_id, accepted_at)
                        SELECT p.app_id, p.push_id, \(push.part) + r.ordinality, r.after, r.through, r.after, p.accepted_at
                        FROM pushes p, unnest(\(split.map(\.after))::uuid[], \(split.map(\.through))::uuid[])
                                       WITH ORDINALITY AS r (after, through, ordinality)
                        WHERE p.app_id = \(push.appID) AND p.push_id = \(push.pushID)
                        """,
                        logger: self.logger)
                    try await connection.query("SELECT pg_notify(\(Self.channel), '')", logger: self.logger)
                }
                try await Self.insert(outcomes.map { (push.pushID, $0) }, appID: push.appID, now: now, on: connection, logger: self.logger)
                if !pruned.isEmpty { try await Self.prune(pruned, of: push, on: connection, logger: self.logger) }
                if case .liveActivity(let event, let name, _) = push.kind, !sent.isEmpty {
                    switch event {
                    // A start through a live activity channel subscribes its activities, which report no token.
                    case .start where push.broadcastChannelID == nil:
                        try await Self.awaitTokens(of: sent, name: name, start: push, now: now, on: connection, logger: self.logger)
                    case .start:
                        break
                    case .end:
                        try await Self.markEnded(
                            sent.map { EndedActivity(channelID: $0, name: name, dismissAt: push.dismissalDate, pushID: push.pushID) }, appID: push.appID, now: now, on: connection, logger: self.logger)
                    case .update:
                        break
                    }
                }
                return true
            }
        }
    }

    /// Inserts what APNs answered for each target of the app's pushes, with an event of each for the app's stream
    /// (`SEND` when APNs accepted it, unless the app turned them off; else `SEND_REJECTED` with the status and APNs's
    /// reason, and an `UNINSTALL` when a 410 was for the channel's device token), and the console's sends per minute;
    /// and a `SEND_SKIPPED` event, with its reason, of each target not sent.
    static func insert(
        _ outcomes: [(pushID: UUID, outcome: Outcome)], appID: Int64, now: Date, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let skipped = outcomes.compactMap { entry in entry.outcome.skipped.map { (pushID: entry.pushID, channelID: entry.outcome.target.channelID, reason: $0) } }
        if !skipped.isEmpty {
            try await connection.query(
                """
                INSERT INTO events (app_id, type, occurred_at, channel_id, push_id, body)
                SELECT \(appID), '\(unescaped: EventType.sendSkipped.rawValue)', \(now), channel_id, push_id, jsonb_build_object('reason', reason)
                FROM unnest(\(skipped.map(\.pushID))::uuid[], \(skipped.map(\.channelID))::uuid[], \(skipped.map(\.reason.rawValue))::text[])
                     AS r (push_id, channel_id, reason)
                """,
                logger: logger)
        }
        let delivered = outcomes.filter { $0.outcome.skipped == nil }
        guard !delivered.isEmpty else { return }
        let pushIDs = delivered.map(\.pushID)
        let outcomes = delivered.map(\.outcome)
        // Columns as arrays: cheaper to send and read than JSON rows, thousands at a time.
        try await connection.query(
            """
            WITH recorded AS (
                INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, reason, apns_id, apns_unique_id, priority, sent_at)
                SELECT \(appID), push_id, token, channel_id, status, NULLIF(reason, ''),
                       NULLIF(apns_id, '')::uuid, NULLIF(apns_unique_id, '')::uuid, priority, \(now)
                FROM unnest(\(pushIDs)::uuid[], \(outcomes.map(\.target.token.hex))::text[], \(outcomes.map(\.target.channelID))::uuid[],
                            \(outcomes.map { Int16($0.status) })::smallint[], \(outcomes.map { $0.reason?.rawValue ?? "" })::text[],
                            \(outcomes.map { $0.apnsID ?? "" })::text[], \(outcomes.map(\.storedUniqueID))::text[],
                            \(outcomes.map { Int16($0.priority.rawValue) })::smallint[])
                     AS r (push_id, token, channel_id, status, reason, apns_id, apns_unique_id, priority)
                RETURNING push_id, token, channel_id, status, reason, sent_at)
            INSERT INTO events (app_id, type, occurred_at, channel_id, push_id, body)
            SELECT \(appID), CASE WHEN status = 200 THEN 'SEND' ELSE 'SEND_REJECTED' END, sent_at, channel_id, push_id,
                   CASE WHEN status <> 200 THEN jsonb_strip_nulls(jsonb_build_object('status', status, 'reason', reason)) END
            FROM recorded
            WHERE status <> 200 OR (SELECT send_events FROM apps WHERE id = \(appID))
            UNION ALL
            SELECT \(appID), 'UNINSTALL', r.sent_at, r.channel_id, r.push_id, '{"decay": false}'
            FROM recorded r JOIN channels c ON c.app_id = \(appID) AND c.channel_id = r.channel_id AND c.push_address = r.token
            WHERE r.status = 410
            """,
            logger: logger)
        // The console's sends per minute: a row per status, never updated, so workers never wait on each other.
        let tallies = Dictionary(outcomes.map { (Int16($0.status), Int32(1)) }, uniquingKeysWith: +)
        try await connection.query(
            """
            INSERT INTO send_tallies (app_id, minute, status, sends)
            SELECT \(appID), date_trunc('minute', \(now)::timestamptz), status, sends
            FROM unnest(\(Array(tallies.keys))::smallint[], \(Array(tallies.values))::integer[]) AS r (status, sends)
            """,
            logger: logger)
    }

    /// An activity an end reached: it leaves the Lock Screen at the end's dismissal date, or after the default time.
    struct EndedActivity {
        var channelID: UUID
        var name: String
        var dismissAt: Date?
        /// The end.
        var pushID: UUID
    }

    /// Ends the app's active activities that ends reached, each with a `LIVE_ACTIVITY_ENDED` event, and its dismissal
    /// due (`due_at`) for the janitor to report.
    static func markEnded(_ activities: [EndedActivity], appID: Int64, now: Date, on connection: PostgresConnection, logger: Logger) async throws {
        guard !activities.isEmpty else { return }
        let dismissals = activities.map { $0.dismissAt ?? now.addingTimeInterval(LiveActivityLifetime.dismissedAfterEnd) }
        try await connection.query(
            """
            WITH ended AS (
                UPDATE live_activities la SET state = 'ended', ended_at = \(now), dismiss_at = r.dismiss_at, due_at = r.dismiss_at
                FROM unnest(\(activities.map(\.channelID))::uuid[], \(activities.map(\.name))::text[], \(dismissals)::timestamptz[],
                            \(activities.map(\.pushID))::uuid[])
                     AS r (channel_id, name, dismiss_at, push_id)
                WHERE la.app_id = \(appID) AND la.channel_id = r.channel_id AND la.name = r.name AND la.state = 'active'
                RETURNING la.app_id, la.channel_id, la.name, la.activity_id, la.ended_at AS occurred_at, r.push_id, la.dismiss_at)
            \(unescaped: EventLog.activityEvents(
                .liveActivityEnded, from: "ended", details: ", 'ended_by', 'push', 'dismissal_date', \(EventLog.date("dismiss_at"))"))
            """,
            logger: logger)
    }

    /// Leaves an activity awaiting its token on each of `channels`, where APNs accepted the start (``AwaitingToken``),
    /// replacing one that expired there; each a `LIVE_ACTIVITY_AWAITING_TOKEN` event.
    private static func awaitTokens(
        of channels: [UUID], name: String, start: ClaimedPush, now: Date, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            WITH awaiting AS (
                INSERT INTO awaiting_activities (app_id, channel_id, name, start_push_id, sent_at)
                SELECT \(start.appID), channel_id, \(name), \(start.pushID), \(now) FROM unnest(\(channels)::uuid[]) AS r (channel_id)
                ON CONFLICT (app_id, channel_id, name) DO UPDATE SET
                    start_push_id = EXCLUDED.start_push_id, sent_at = EXCLUDED.sent_at, state = 'awaiting',
                    held_push_id = NULL, held_timestamp = NULL
                RETURNING app_id, channel_id, name, NULL::text AS activity_id, sent_at AS occurred_at, start_push_id AS push_id)
            \(unescaped: EventLog.activityEvents(.liveActivityAwaitingToken, from: "awaiting"))
            """,
            logger: logger)
    }

    /// The tokens APNs reported dead among `outcomes`, as ``prune(_:of:on:logger:)`` takes them.
    static func deadTokens(in outcomes: [Outcome]) -> [RawJSON] {
        outcomes.compactMap { outcome in
            outcome.deadSince.map { since in
                .object([
                    .init("token", .string(outcome.target.token.hex)),
                    .init("channel_id", .string(outcome.target.channelID.lowercaseString)),
                    .init("since", .number(String(since.timeIntervalSince1970))),
                ])
            }
        }
    }

    /// Removes the tokens APNs reported dead, unless registered again after the report's time (`since`).
    static func prune(_ pruned: [RawJSON], of push: ClaimedPush, on connection: PostgresConnection, logger: Logger) async throws {
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

    /// Marks the part finished (`done` or `superseded`) with its final counts. A push that never split finishes with
    /// it; otherwise the last part to finish finishes the push, `superseded` if any part was, with the sum of its
    /// parts' counts. Does nothing when the worker no longer holds the part.
    public func finish(_ push: ClaimedPush, state: PushState, worker: String, now: Date) async throws(StoreError) {
        let finished = try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection -> PushState? in
                let held = try await connection.query(
                    """
                    UPDATE push_parts SET state = \(state.rawValue), counts = \(push.counts.json.text)::jsonb,
                                          cursor_channel_id = \(push.cursor), lease_expires_at = NULL
                    WHERE \(held: HeldPart(push, worker: worker))
                    RETURNING 1
                    """,
                    logger: self.logger
                ).decode(Int.self).array()
                guard !held.isEmpty else { return nil }
                var (state, counts) = (state, push.counts)
                if !push.isWhole {
                    // Parts finishing at once take turns here, so exactly one of them sees that it is the last.
                    let parts = try await Self.lockedParts(appID: push.appID, pushID: push.pushID, on: connection, logger: self.logger)
                    guard parts.states.allSatisfy({ $0 == .done || $0 == .superseded }) else { return nil }
                    counts = parts.counts
                    state = parts.states.contains(.superseded) ? .superseded : .done
                }
                if state == .done, let ended = self.endedTargets(of: push) {
                    counts.skippedEnded = try await connection.query(ended, logger: self.logger).decode(Int.self).array().first ?? 0
                }
                try await connection.query(
                    """
                    WITH finished AS (
                        UPDATE pushes SET state = \(state.rawValue), finished_at = \(now), counts = \(counts.json.text)::jsonb
                        WHERE app_id = \(push.appID) AND push_id = \(push.pushID)
                        RETURNING \(unescaped: EventLog.finishedColumns(of: "pushes")))
                    \(unescaped: EventLog.finishedEvents)
                    """,
                    logger: self.logger)
                return state
            }
        }
        if let finished { PushMetrics.finished(finished) }
    }

    /// Locks the push's row (so that parts finishing or failing at once take turns) and reads its parts' states and
    /// the sum of their counts.
    static func lockedParts(
        appID: Int64, pushID: UUID, on connection: PostgresConnection, logger: Logger
    ) async throws -> (states: [PushState], counts: PushCounts) {
        try await connection.query("SELECT 1 FROM pushes WHERE app_id = \(appID) AND push_id = \(pushID) FOR UPDATE", logger: logger)
        let parts = try await connection.query(
            "SELECT state, counts::text FROM push_parts WHERE app_id = \(appID) AND push_id = \(pushID)", logger: logger
        ).decode((String, String).self).array()
        var counts = PushCounts()
        var states: [PushState] = []
        for (state, partCounts) in parts {
            guard let state = PushState(rawValue: state) else { throw StoreError.database(reason: "unknown part state \(state)") }
            states.append(state)
            counts = counts + PushCounts(try RawJSONParser.parse(partCounts.utf8))
        }
        return (states, counts)
    }
}
