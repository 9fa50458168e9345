import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Pushes held for activities awaiting their token (``AwaitingToken``): an update or end holds itself on the name's
/// awaiting activities in its audience; the SDK's report of the token releases the held push (``RegistrationWriter``);
/// a worker claims each released push as a part of one channel and sends it to that token.
extension DispatchStore {
    /// Holds an update or end on the name's activities awaiting their token in the part's remaining range and the
    /// push's audience, where nothing newer is held; returns how many. Holding again is harmless: a resumed part
    /// finds its activities already holding it. No statement runs when none of the name's activities awaited its token
    /// as the part was claimed (``ClaimedPush/nameAwaitsTokens``).
    ///
    /// It runs before the part reads its targets: a token reported before the hold is among them, one reported after
    /// releases the push.
    public func hold(_ push: ClaimedPush, now: Date) async throws(StoreError) -> Int {
        guard case .liveActivity(let event, let name, _) = push.kind, event != .start, push.nameAwaitsTokens,
            let timestamp = push.timestamp
        else { return 0 }
        var parameters = QueryParameters()
        let (app, after, through) = (parameters.bind(push.appID), parameters.bind(push.cursor), parameters.bind(push.through))
        let (activityName, sentSince) = (parameters.bind(name), parameters.bind(now.addingTimeInterval(-LiveActivityLifetime.updatable)))
        let (pushID, held) = (parameters.bind(push.pushID), parameters.bind(timestamp))
        let filter = AudienceFilter(
            push.audience, channel: "a.channel_id", appID: push.appID, zone: push.localTimeZone, after: parameters.bindings)
        let query = PostgresQuery(
            unsafeSQL: """
                UPDATE awaiting_activities a SET held_push_id = \(pushID), held_timestamp = \(held)
                WHERE a.app_id = \(app) AND a.name = \(activityName) AND a.state = 'awaiting' AND a.sent_at > \(sentSince)
                  AND a.channel_id > \(after) AND a.channel_id <= \(through)
                  AND (a.held_timestamp IS NULL OR a.held_timestamp < \(held)) AND \(filter.sql)
                RETURNING 1
                """,
            binds: filter.bindings)
        return try await StoreError.mapping { [query] in
            try await self.client.query(query, logger: self.logger).collect().count
        }
    }

    /// Held pushes that tokens released, claimed together: the push (as a part whose range is beside the point) and
    /// the tokens it goes to.
    public struct ReleasedPush: Sendable {
        public var push: ClaimedPush
        public var targets: [DispatchTarget]
        /// The most times one of its releases was claimed, this time included.
        public var attempts: Int
    }

    /// What a claim of released pushes reads besides the push: the release's channel and token, and the budget facts
    /// of its target.
    enum ReleaseColumn: String, SelectedColumn {
        case channelID = "release_channel_id", token = "release_token", attempts = "release_attempts"
        case frequentPushes = "frequent_pushes_enabled", recentPriority10 = "recent_priority_10"

        var expression: String {
            switch self {
            case .channelID: "part.channel_id"
            case .token: "part.token"
            case .attempts: "part.attempts"
            case .frequentPushes: "coalesce(c.frequent_pushes_enabled, false)"
            case .recentPriority10:
                """
                (SELECT count(*)::int FROM delivery_outcomes o WHERE o.app_id = part.app_id AND o.channel_id = part.channel_id
                 AND o.token = part.token AND o.priority = 10 AND o.status = 200 AND o.sent_at > now() - interval '1 hour')
                """
            }
        }
    }

    /// Claims up to `limit` released pushes whose lease is free, oldest release first, under a lease, grouped by push.
    public func claimReleased(worker: String, limit: Int, lease: Duration) async throws(StoreError) -> [ReleasedPush] {
        let rows = try await StoreError.mapping {
            try await self.client.query(
                """
                WITH next AS (
                    SELECT app_id, channel_id, name FROM held_releases
                    WHERE lease_expires_at IS NULL OR lease_expires_at < now()
                    ORDER BY released_at LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED),
                part AS (
                    UPDATE held_releases r SET claimed_by = \(worker), attempts = r.attempts + 1,
                                               lease_expires_at = now() + make_interval(secs => \(Self.seconds(lease)))
                    FROM next WHERE r.app_id = next.app_id AND r.channel_id = next.channel_id AND r.name = next.name
                    RETURNING r.app_id, r.push_id, r.channel_id, r.token, r.attempts, 0::smallint AS part,
                              r.channel_id AS through_channel_id, r.channel_id AS cursor_channel_id, '{}'::jsonb AS counts)
                SELECT \(unescaped: ClaimedPush.Column.selectList), \(unescaped: ReleaseColumn.selectList)
                FROM part JOIN pushes p ON p.app_id = part.app_id AND p.push_id = part.push_id
                     LEFT JOIN channels c ON c.app_id = part.app_id AND c.channel_id = part.channel_id
                ORDER BY part.app_id, part.push_id
                """,
                logger: self.logger
            ).collect()
        }
        var released: [ReleasedPush] = []
        do {
            for row in rows {
                let push = try ClaimedPush(NamedRow<ClaimedPush.Column>(row))
                let release = NamedRow<ReleaseColumn>(row)
                let target = DispatchTarget(
                    channelID: try release.decode(.channelID), token: try release.decode(.token),
                    frequentPushes: try release.decode(.frequentPushes), recentPriority10: try release.decode(.recentPriority10),
                    alreadyActive: false, awaitingToken: false, recentStarts: 0, newerSent: false)
                let attempts: Int = try release.decode(.attempts)
                if let last = released.last, last.push.appID == push.appID, last.push.pushID == push.pushID {
                    released[released.count - 1].targets.append(target)
                    released[released.count - 1].attempts = max(last.attempts, attempts)
                } else {
                    released.append(ReleasedPush(push: push, targets: [target], attempts: attempts))
                }
            }
        } catch {
            throw .database(reason: "a released push cannot be read: \(error)")
        }
        return released
    }

    /// Records what APNs answered for a released push, in one transaction, and forgets its releases: the outcomes,
    /// tokens APNs reported dead, the activities an end reached, and on the push, `delivered_after_token` for each
    /// that APNs accepted. Outcomes whose release the worker no longer holds (its lease ran out and another worker
    /// took it) are not recorded.
    public func recordReleased(_ outcomes: [Outcome], of released: ReleasedPush, worker: String, now: Date) async throws(StoreError) {
        let push = released.push
        guard case .liveActivity(let event, let name, _) = push.kind else { return }
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let held = Set(try await connection.query(
                    """
                    DELETE FROM held_releases
                    WHERE app_id = \(push.appID) AND channel_id = ANY(\(outcomes.map(\.target.channelID))) AND name = \(name)
                      AND push_id = \(push.pushID) AND claimed_by = \(worker)
                    RETURNING channel_id
                    """,
                    logger: self.logger
                ).decode(UUID.self).array())
                let outcomes = outcomes.filter { held.contains($0.target.channelID) }
                try await Self.insert(outcomes.map { (push.pushID, $0) }, appID: push.appID, now: now, on: connection, logger: self.logger)
                let dead = Self.deadTokens(in: outcomes)
                if !dead.isEmpty { try await Self.prune(dead, of: push, on: connection, logger: self.logger) }
                let sent = outcomes.filter { $0.status == 200 }.map(\.target.channelID)
                guard !sent.isEmpty else { return }
                if event == .end {
                    try await Self.markEnded(
                        sent.map { EndedActivity(channelID: $0, name: name, dismissAt: push.dismissalDate, pushID: push.pushID) }, appID: push.appID, now: now, on: connection, logger: self.logger)
                }
                try await connection.query(
                    """
                    UPDATE pushes SET delivered_after_token = delivered_after_token + \(sent.count)
                    WHERE app_id = \(push.appID) AND push_id = \(push.pushID)
                    """,
                    logger: self.logger)
            }
        }
    }

    /// Forgets the releases of a push that were claimed too often without an answer being recorded (a worker dying on
    /// them each time).
    public func dropReleased(_ released: ReleasedPush) async throws(StoreError) {
        guard case .liveActivity(_, let name, _) = released.push.kind else { return }
        _ = try await StoreError.mapping {
            try await self.client.query(
                """
                DELETE FROM held_releases
                WHERE app_id = \(released.push.appID) AND channel_id = ANY(\(released.targets.map(\.channelID))) AND name = \(name)
                  AND push_id = \(released.push.pushID)
                """,
                logger: self.logger)
        }
    }

    /// The janitor's chore: marks activities that awaited their token for their whole lifetime expired, counting them
    /// on their start and on the push held for each (`expired_awaiting_token`), each a `LIVE_ACTIVITY_EXPIRED` event
    /// (occurring when their 8 hours ran out, its push the start), and deletes expired ones once iOS would
    /// have removed them; app by app in batches (``BatchedDelete``) until `budget` is spent. Returns how many expired.
    public func expireAwaitingActivities(now: Date, budget: Duration, batchSize: Int = BatchedDelete.size) async throws(StoreError) -> Int {
        let started = ContinuousClock.now
        let updatable = now.addingTimeInterval(-LiveActivityLifetime.updatable)
        let kept = now.addingTimeInterval(-LiveActivityLifetime.kept)
        let apps = try await BatchedDelete.appIDs(self.client, logger: self.logger)
        let expired = try await BatchedDelete.run(over: apps, size: batchSize, budget: budget) { appID, limit in
            try await BatchedDelete.count(
                """
                WITH expired AS (
                    UPDATE awaiting_activities SET state = 'expired'
                    WHERE ctid = ANY(ARRAY(
                            SELECT ctid FROM awaiting_activities
                            WHERE app_id = \(appID) AND sent_at <= \(updatable) AND state = 'awaiting' LIMIT \(limit)))
                      AND app_id = \(appID) AND sent_at <= \(updatable) AND state = 'awaiting'
                    RETURNING app_id, channel_id, name, start_push_id, held_push_id, sent_at),
                expiries AS (
                    SELECT app_id, channel_id, name, NULL::text AS activity_id, start_push_id AS push_id,
                           sent_at + interval '\(unescaped: String(Int(LiveActivityLifetime.updatable))) seconds' AS occurred_at
                    FROM expired),
                reported AS (
                    \(unescaped: EventLog.activityEvents(.liveActivityExpired, from: "expiries"))),
                counted AS (
                    SELECT app_id, push_id, count(*)::int AS n FROM (
                        SELECT app_id, start_push_id AS push_id FROM expired
                        UNION ALL
                        SELECT app_id, held_push_id FROM expired WHERE held_push_id IS NOT NULL) AS pushes
                    GROUP BY app_id, push_id),
                tallied AS (
                    UPDATE pushes p SET expired_awaiting_token = p.expired_awaiting_token + counted.n
                    FROM counted WHERE p.app_id = counted.app_id AND p.push_id = counted.push_id)
                SELECT count(*)::int FROM expired
                """,
                on: self.client, logger: self.logger)
        }
        // Only those counted above go: one still awaiting past its lifetime is counted first, in a later run.
        _ = try await BatchedDelete.run(over: apps, size: batchSize, budget: budget - (ContinuousClock.now - started)) { appID, limit in
            try await BatchedDelete.count(
                """
                WITH gone AS (
                    DELETE FROM awaiting_activities
                    WHERE ctid = ANY(ARRAY(
                            SELECT ctid FROM awaiting_activities
                            WHERE app_id = \(appID) AND sent_at <= \(kept) AND state = 'expired' LIMIT \(limit)))
                      AND app_id = \(appID) AND sent_at <= \(kept) AND state = 'expired'
                    RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                on: self.client, logger: self.logger)
        }
        return expired
    }
}
