import BlimpCore
import Foundation
import Logging
import PostgresNIO

extension DispatchStore {
    /// The next `limit` targets of the part after its cursor, in channel order: for an update or end, the update
    /// tokens of the name's active activities (tracked less than 8 hours ago); for a start, the push-to-start tokens
    /// of its attributes type, each with whether the name is active or awaiting its token there; for an alert, the opted-in channels' device tokens. Always on channels in the
    /// audience. (The cursor and the part's end bound both sides of each join: without them on `channels`, a merge
    /// join reads that table from its start for every batch.)
    public func targets(of push: ClaimedPush, limit: Int, now: Date) async throws(StoreError) -> [DispatchTarget] {
        var (query, order) = Self.targetQuery(of: push, now: now)
        query.binds.append(limit)
        query.sql = "SELECT \(query.sql) ORDER BY \(order) LIMIT $\(query.binds.count)"
        return try await StoreError.mapping { [query] in
            let rows = try await self.client.query(query, logger: self.logger)
            var targets: [DispatchTarget] = []
            for try await (channel, text, frequent, recent, active, awaiting, starts, newer) in rows.decode(
                (UUID, String, Bool, Int, Bool, Bool, Int, Bool).self)
            {
                guard let token = DeviceToken(text) else { throw StoreError.database(reason: "a target's token is not an APNs device token") }
                targets.append(DispatchTarget(
                    channelID: channel, token: token, frequentPushes: frequent, recentPriority10: recent,
                    alreadyActive: active, awaitingToken: awaiting, recentStarts: starts, newerSent: newer))
            }
            return targets
        }
    }

    /// How many targets of the part remain after its cursor: what a superseded part did not send.
    public func remainingTargets(of push: ClaimedPush, now: Date) async throws(StoreError) -> Int {
        var (query, _) = Self.targetQuery(of: push, now: now)
        query.sql = "SELECT count(*)::int FROM (SELECT \(query.sql)) AS remaining"
        return try await StoreError.mapping { [query] in
            try await self.client.query(query, logger: self.logger).decode(Int.self).array().first ?? 0
        }
    }

    /// How many targets a push of `kind` to `audience` would have now: the console's preview of a push's reach.
    public func reach(
        appID: Int64, kind: ClaimedPush.Kind, audience: Audience, priority: APNsPriority, now: Date
    ) async throws(StoreError) -> Int {
        var (query, _) = Self.targetQuery(
            appID: appID, kind: kind, audience: audience, priority: priority, range: ChannelIDRange.all, now: now)
        query.sql = "SELECT count(*)::int FROM (SELECT \(query.sql)) AS reached"
        return try await StoreError.mapping { [query] in
            try await self.client.query(query, logger: self.logger).decode(Int.self).array().first ?? 0
        }
    }

    /// The part's targets after its cursor as a query to put after `SELECT`, and the column they are ordered by.
    private static func targetQuery(of push: ClaimedPush, now: Date) -> (PostgresQuery, order: String) {
        Self.targetQuery(
            appID: push.appID, kind: push.kind, audience: push.audience, zone: push.localTimeZone, priority: push.priority,
            timestamp: push.timestamp, mayBeStale: push.mayBeStale, range: ChannelIDRange(after: push.cursor, through: push.through),
            now: now)
    }

    /// The targets of a push in `range` (after, through] as a query to put after `SELECT`, and their order.
    private static func targetQuery(
        appID: Int64, kind: ClaimedPush.Kind, audience: Audience, zone: LocalTimeZone? = nil, priority: APNsPriority,
        timestamp: Int64? = nil, mayBeStale: Bool = false, range: ChannelIDRange, now: Date
    ) -> (PostgresQuery, order: String) {
        // $1 to $3 are shared; each kind binds what its query reads after them.
        var bindings = PostgresBindings()
        bindings.append(appID)
        bindings.append(range.after)
        bindings.append(range.through)
        let hourAgo = now.addingTimeInterval(-3600)
        let updatable = now.addingTimeInterval(-LiveActivityLifetime.updatable)
        let sql: String
        let order: String
        switch kind {
        case .liveActivity(.start, let name, let attributesType):
            bindings.append(attributesType ?? "")
            bindings.append(name)
            bindings.append(updatable)
            bindings.append(hourAgo)
            let filter = AudienceFilter(audience, channel: "s.channel_id", appID: appID, zone: zone, after: bindings)
            bindings = filter.bindings
            order = "s.channel_id"
            sql = """
                s.channel_id, s.token, c.frequent_pushes_enabled, 0,
                       EXISTS (SELECT 1 FROM live_activities la WHERE la.app_id = $1 AND la.channel_id = s.channel_id
                               AND la.name = $5 AND la.state = 'active' AND la.started_at > $6),
                       EXISTS (SELECT 1 FROM awaiting_activities a WHERE a.app_id = $1 AND a.channel_id = s.channel_id
                               AND a.name = $5 AND a.state = 'awaiting' AND a.sent_at > $6),
                       (SELECT count(*)::int FROM delivery_outcomes o WHERE o.app_id = $1 AND o.channel_id = s.channel_id AND o.token = s.token
                        AND o.status = 200 AND o.sent_at > $7),
                       false
                FROM push_to_start_tokens s JOIN channels c ON c.app_id = s.app_id AND c.channel_id = s.channel_id
                WHERE s.app_id = $1 AND s.attributes_type = $4 AND s.token IS NOT NULL AND s.channel_id > $2 AND s.channel_id <= $3
                  AND c.channel_id > $2 AND c.channel_id <= $3 AND c.installed AND \(filter.sql)
                """
        case .liveActivity(_, let name, _):
            bindings.append(name)
            bindings.append(updatable)
            // Whether the activity (its token) was sent a newer push of the name than this one: an update that may be
            // stale skips it (``ClaimedPush/mayBeStale``); from what APNs accepted, so no send writes anything more.
            var newerSent = "false"
            if mayBeStale, let timestamp {
                bindings.append(timestamp)
                // A scalar subquery through the outcomes' index, each outcome's push looked up: as an EXISTS, PostgreSQL
                // may hash every outcome of the app instead, again for each target.
                newerSent = """
                    (SELECT o.push_id FROM delivery_outcomes o
                     WHERE o.app_id = $1 AND o.channel_id = la.channel_id AND o.sent_at > $5 AND o.token = la.token AND o.status = 200
                       AND (SELECT q.aps_timestamp FROM pushes q
                            WHERE q.app_id = o.app_id AND q.push_id = o.push_id AND q.activity_name = $4) > $\(bindings.count)
                     ORDER BY o.app_id, o.channel_id, o.sent_at DESC LIMIT 1) IS NOT NULL
                    """
            }
            // Priority-10 sends in the last hour matter only to a push that asks for priority 10.
            var recentPriority10 = "0"
            if priority == .immediate {
                bindings.append(hourAgo)
                recentPriority10 = """
                    (SELECT count(*)::int FROM delivery_outcomes o WHERE o.app_id = $1 AND o.channel_id = la.channel_id AND o.token = la.token
                     AND o.priority = 10 AND o.status = 200 AND o.sent_at > $\(bindings.count))
                    """
            }
            let filter = AudienceFilter(audience, channel: "la.channel_id", appID: appID, zone: zone, after: bindings)
            bindings = filter.bindings
            order = "la.channel_id"
            sql = """
                la.channel_id, la.token, c.frequent_pushes_enabled, \(recentPriority10), false, false, 0, \(newerSent)
                FROM live_activities la JOIN channels c ON c.app_id = la.app_id AND c.channel_id = la.channel_id
                WHERE la.app_id = $1 AND la.name = $4 AND la.state = 'active' AND la.started_at > $5
                  AND la.channel_id > $2 AND la.channel_id <= $3
                  AND c.channel_id > $2 AND c.channel_id <= $3 AND \(filter.sql)
                """
        case .alert:
            let filter = AudienceFilter(audience, channel: "c.channel_id", appID: appID, zone: zone, after: bindings)
            bindings = filter.bindings
            order = "c.channel_id"
            sql = """
                c.channel_id, c.push_address, c.frequent_pushes_enabled, 0, false, false, 0, false
                FROM channels c
                WHERE c.app_id = $1 AND c.installed AND c.opt_in AND c.push_address IS NOT NULL
                  AND c.channel_id > $2 AND c.channel_id <= $3
                  AND \(filter.sql)
                """
        }
        return (PostgresQuery(unsafeSQL: sql, binds: bindings), order)
    }

    /// The count of update tokens of the name's ended activities in the audience: what an update skips
    /// (`skipped_ended`); nil for other pushes.
    func endedTargets(of push: ClaimedPush) -> PostgresQuery? {
        guard case .liveActivity(.update, let name, _) = push.kind else { return nil }
        var bindings = PostgresBindings()
        bindings.append(push.appID)
        bindings.append(name)
        let filter = AudienceFilter(push.audience, channel: "la.channel_id", appID: push.appID, zone: push.localTimeZone, after: bindings)
        bindings = filter.bindings
        return PostgresQuery(
            unsafeSQL: """
                SELECT count(*)::int FROM live_activities la
                WHERE la.app_id = $1 AND la.name = $2 AND la.state = 'ended' AND la.token IS NOT NULL AND \(filter.sql)
                """,
            binds: bindings)
    }

}
