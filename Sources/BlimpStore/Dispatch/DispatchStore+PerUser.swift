import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Per-user pushes (``ClaimedPush/isPerUser``: an update or end of one channel's or one named user's activities of a
/// name), many at once: one app's batch is resolved in one statement and recorded, outcomes and all, in one
/// transaction, where a push sent by its own fan-out costs a claim, a targets query, a supersede check, a checkpoint
/// and a finish each.
extension DispatchStore {
    /// What a per-user push comes to before it is sent.
    public struct PerUserTargets: Sendable {
        /// Its tokens: those of the name's active activities on the channel, or on the named user's channels.
        public var targets: [DispatchTarget] = []
        /// A newer update or end of the name to the same audience is waiting: an update is superseded unsent.
        public var superseded = false
        /// For an update: the update tokens of the name's ended activities in its audience (`skipped_ended`).
        public var ended = 0
        /// It has more targets than a batch takes (a named user of many channels): its own fan-out sends it.
        public var overflows = false
        /// Why a target cannot be read: the push fails.
        public var unreadable: String?
    }

    /// The targets of `pushes` (per-user, of one app) in one statement, each push's in channel order, at most `limit`
    /// read per push. Each target is checked against what its activity was already sent (an update older than it is
    /// skipped), and against the token's priority-10 sends in the last hour for a push that asks for priority 10.
    public func targets(ofPerUser pushes: [ClaimedPush], limit: Int, now: Date) async throws(StoreError) -> [PerUserTargets] {
        guard let appID = pushes.first?.appID else { return [] }
        var names: [String] = [], events: [String] = [], channels: [String] = [], users: [String] = []
        for push in pushes {
            guard case .liveActivity(let event, let name, _) = push.kind else { preconditionFailure("a per-user push is a Live Activity's") }
            names.append(name)
            events.append(event.rawValue)
            switch push.audience {
            case .channel(let id):
                channels.append(id.lowercaseString)
                users.append("")
            case .namedUser(let id):
                channels.append("")
                users.append(id)
            default: preconditionFailure("a per-user push goes to one channel or named user")
            }
        }
        let updatable = now.addingTimeInterval(-LiveActivityLifetime.updatable)
        let hourAgo = now.addingTimeInterval(-3600)
        // Each lookup is a scalar subquery or a lateral join driven by the batch's rows, so that the plan stays one
        // probe per push and target whatever the statistics say (a join would let PostgreSQL read every push of the
        // app, or every push of the name per target, when statistics were taken before the backlog).
        let query: PostgresQuery = """
            SELECT \(unescaped: PerUserTargetColumn.selectList)
            FROM (
                SELECT b.*,
                       -- Whether a newer update or end of the name to the same audience as written waits (isSuperseded).
                       b.event = 'update' AND (
                           SELECT q.push_id FROM pushes q
                           WHERE q.app_id = \(appID)
                             AND md5(q.audience::text || q.activity_name) = (
                                 SELECT md5(p.audience::text || p.activity_name) FROM pushes p WHERE p.app_id = \(appID) AND p.push_id = b.push_id)
                             AND q.aps_timestamp >= b.timestamp AND (q.aps_timestamp, q.push_id) > (b.timestamp, b.push_id)
                             AND \(unescaped: ActivityOrder.unfinished) AND q.event IN ('update', 'end')
                           ORDER BY q.app_id, md5(q.audience::text || q.activity_name), q.aps_timestamp LIMIT 1) IS NOT NULL AS superseded,
                       CASE WHEN b.event = 'update' THEN (
                           SELECT count(*)::int FROM live_activities e
                           WHERE e.app_id = \(appID) AND e.name = b.name AND e.state = 'ended' AND e.token IS NOT NULL
                             AND (e.channel_id = NULLIF(b.channel, '')::uuid
                                  OR e.channel_id IN (SELECT n.channel_id FROM channels n
                                                      WHERE b.named_user <> '' AND n.app_id = \(appID) AND n.named_user_id = b.named_user)))
                       ELSE 0 END AS ended
                FROM unnest(\(pushes.map(\.pushID))::uuid[], \(names)::text[], \(events)::text[], \(channels)::text[], \(users)::text[],
                            \(pushes.map { $0.timestamp ?? 0 })::bigint[], \(pushes.map { $0.priority == .immediate })::boolean[])
                     WITH ORDINALITY AS b (push_id, name, event, channel, named_user, timestamp, immediate, n)
            ) b
            LEFT JOIN LATERAL (
                SELECT la.channel_id, la.token, c.frequent_pushes_enabled AS frequent,
                       CASE WHEN b.immediate THEN (
                           SELECT count(*)::int FROM delivery_outcomes o
                           WHERE o.app_id = \(appID) AND o.channel_id = la.channel_id AND o.token = la.token AND o.priority = 10
                             AND o.status = 200 AND o.sent_at > \(hourAgo))
                       ELSE 0 END AS recent,
                       -- The activity was sent a newer timestamp of the name: the update is skipped there. The token's
                       -- outcomes through their index, each one's push looked up (a scalar subquery, never an EXISTS,
                       -- which PostgreSQL may hash over every outcome of the app, again for each target).
                       b.event = 'update' AND (
                           SELECT o.push_id FROM delivery_outcomes o
                           WHERE o.app_id = \(appID) AND o.channel_id = la.channel_id AND o.sent_at > \(updatable)
                             AND o.token = la.token AND o.status = 200
                             AND (SELECT q.aps_timestamp FROM pushes q
                                  WHERE q.app_id = o.app_id AND q.push_id = o.push_id AND q.activity_name = b.name) > b.timestamp
                           ORDER BY o.app_id, o.channel_id, o.sent_at DESC LIMIT 1) IS NOT NULL AS newer
                FROM (SELECT NULLIF(b.channel, '')::uuid AS channel_id WHERE b.channel <> ''
                      UNION ALL
                      SELECT n.channel_id FROM channels n WHERE b.named_user <> '' AND n.app_id = \(appID) AND n.named_user_id = b.named_user
                     ) AS reached
                JOIN live_activities la ON la.app_id = \(appID) AND la.channel_id = reached.channel_id AND la.name = b.name
                JOIN channels c ON c.app_id = la.app_id AND c.channel_id = la.channel_id
                WHERE la.state = 'active' AND la.started_at > \(updatable)
                ORDER BY la.channel_id
                LIMIT \(limit + 1)
            ) t ON true
            ORDER BY b.n, t.channel_id
            """
        return try await StoreError.mapping { [query] in
            var resolved = [PerUserTargets](repeating: PerUserTargets(), count: pushes.count)
            for try await cells in try await self.client.query(query, logger: self.logger) {
                let row = NamedRow<PerUserTargetColumn>(cells)
                let index = try row.decode(.index, as: Int.self) - 1
                resolved[index].superseded = try row.decode(.superseded)
                resolved[index].ended = try row.decode(.ended)
                guard let channel = try row.decode(.channelID, as: UUID?.self) else { continue }
                guard let token = DeviceToken(try row.decode(.token, as: String.self)) else {
                    resolved[index].unreadable = "a target's token is not an APNs device token"
                    continue
                }
                guard resolved[index].targets.count < limit else {
                    resolved[index].overflows = true
                    continue
                }
                resolved[index].targets.append(DispatchTarget(
                    channelID: channel, token: token, frequentPushes: try row.decode(.frequentPushes),
                    recentPriority10: try row.decode(.recentPriority10), alreadyActive: false, awaitingToken: false, recentStarts: 0,
                    newerSent: try row.decode(.newerSent)))
            }
            return resolved
        }
    }

    /// What ``targets(ofPerUser:limit:now:)`` reads: per push (`b`), its place in the batch and what holds for it as a
    /// whole; per target (`t`, none when it has no target), its token and what its plan needs.
    enum PerUserTargetColumn: String, SelectedColumn {
        case index, superseded, ended
        case channelID = "channel_id", token, frequentPushes = "frequent_pushes", recentPriority10 = "recent_priority_10"
        case newerSent = "newer_sent"

        var expression: String {
            switch self {
            case .index: "b.n::int"
            case .superseded, .ended: "b.\(self.rawValue)"
            case .channelID, .token: "t.\(self.rawValue)"
            case .frequentPushes: "t.frequent"
            case .recentPriority10: "t.recent"
            case .newerSent: "t.newer"
            }
        }
    }

    /// A per-user push sent: what APNs answered, its counts, and how it ended (`done` or `superseded`).
    public struct PerUserDelivery: Sendable {
        public var push: ClaimedPush
        public var outcomes: [Outcome]
        public var state: PushState

        public init(push: ClaimedPush, outcomes: [Outcome], state: PushState) {
            self.push = push
            self.outcomes = outcomes
            self.state = state
        }
    }

    /// Records per-user pushes of one app, sent together, in one transaction: each one's outcomes, the tokens APNs
    /// reported dead, the activities an end reached, and the push finished with its counts. A push whose part the
    /// worker no longer holds (its lease expired and another took it) is left out.
    ///
    /// Rows are found by their keys with `= ANY` as well as joined to the batch: that is a range of the primary key
    /// whatever the statistics say. With statistics from before a burst, a join alone could be planned as a scan of
    /// the table per row of the batch (a lease renewal took 2 to 6 s).
    public func record(perUser deliveries: [PerUserDelivery], worker: String, now: Date) async throws(StoreError) {
        guard let first = deliveries.first?.push else { return }
        let appID = first.appID
        let recorded = try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection -> [PerUserDelivery] in
                let held = Set(try await connection.query(
                    """
                    UPDATE push_parts t SET state = r.state, counts = r.counts::jsonb, lease_expires_at = NULL
                    FROM unnest(\(deliveries.map(\.push.pushID))::uuid[], \(deliveries.map(\.state.rawValue))::text[],
                                \(deliveries.map(\.push.counts.json.text))::text[]) AS r (push_id, state, counts)
                    WHERE t.app_id = \(appID) AND t.push_id = ANY(\(deliveries.map(\.push.pushID))) AND t.part = 0 AND t.push_id = r.push_id
                      AND t.claimed_by = \(worker) AND t.state = 'sending'
                    RETURNING t.push_id
                    """,
                    logger: self.logger
                ).decode(UUID.self).array())
                let recorded = deliveries.filter { held.contains($0.push.pushID) }
                guard !recorded.isEmpty else { return [] }
                let outcomes = recorded.flatMap { delivery in delivery.outcomes.map { (pushID: delivery.push.pushID, outcome: $0) } }
                try await Self.insert(outcomes, appID: appID, now: now, on: connection, logger: self.logger)
                let dead = Self.deadTokens(in: outcomes.map(\.outcome))
                if !dead.isEmpty { try await Self.prune(dead, of: first, on: connection, logger: self.logger) }
                let ended = recorded.flatMap { delivery -> [EndedActivity] in
                    guard case .liveActivity(.end, let name, _) = delivery.push.kind else { return [] }
                    return delivery.outcomes.filter { $0.status == 200 }
                        .map { EndedActivity(channelID: $0.target.channelID, name: name, dismissAt: delivery.push.dismissalDate, pushID: delivery.push.pushID) }
                }
                try await Self.markEnded(ended, appID: appID, now: now, on: connection, logger: self.logger)
                try await connection.query(
                    """
                    WITH finished AS (
                        UPDATE pushes p SET state = r.state, finished_at = \(now), counts = r.counts::jsonb
                        FROM unnest(\(recorded.map(\.push.pushID))::uuid[], \(recorded.map(\.state.rawValue))::text[],
                                    \(recorded.map(\.push.counts.json.text))::text[]) AS r (push_id, state, counts)
                        WHERE p.app_id = \(appID) AND p.push_id = ANY(\(recorded.map(\.push.pushID))) AND p.push_id = r.push_id
                        RETURNING \(unescaped: EventLog.finishedColumns(of: "p")))
                    \(unescaped: EventLog.finishedEvents)
                    """,
                    logger: self.logger)
                return recorded
            }
        }
        for delivery in recorded { PushMetrics.finished(delivery.state) }
    }
}
