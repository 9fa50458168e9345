import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// What workers read and write in PostgreSQL: claiming parts of pushes under a lease, resolving their targets in
/// keyset batches (`DispatchStore+Targets`), and recording each batch's outcomes with the part's cursor in one
/// transaction (`DispatchStore+Checkpoints`).
public struct DispatchStore: Sendable {
    let client: Database
    let logger: Logger
    /// Whether the claim's statements are prepared once per connection (not through a transaction pooler).
    let preparedStatements: Bool

    /// The channel workers LISTEN on; the API notifies it when it queues pushes.
    public static let channel = "blimp_pushes"
    /// The payload of a notification that a device's token released held pushes (``claimReleased(worker:limit:lease:)``).
    public static let releasedPayload = "released"

    /// With `preparedStatements` (not through a transaction pooler), the claim's statements are prepared once per
    /// connection: planning them took longer than running them, on every attempt of every claim loop.
    public init(client: Database, logger: Logger, preparedStatements: Bool = true) {
        self.client = client
        self.logger = logger
        self.preparedStatements = preparedStatements
    }

    // MARK: - Claiming

    /// Claims the next work: from the app with queued pushes that has waited longest for a claim (so one app's
    /// backlog delays another app's push by a claim, not by the backlog), its oldest queued push that no older
    /// unfinished push of its Live Activity name may share an activity with (``ActivityOrder``: so each activity's
    /// pushes go out in acceptance order), as one part over every channel. When that push is per-user
    /// (``ClaimedPush/isPerUser``), the app's next claimable per-user pushes come with it, up to `limit` in all, to be
    /// sent together. Else, a part of a push already being sent that is waiting (and due, if it failed before) or
    /// whose lease expired (its worker died), oldest push first. New pushes go first so that a large fan-out's parts
    /// never hold a small push up for long. Leases are measured by the database's clock, which every worker shares.
    ///
    /// A claimed row that cannot be read fails its push at once, so it never blocks its name; the others are returned.
    public func claim(worker: String, now: Date, lease: Duration, limit: Int = 1) async throws(StoreError) -> [ClaimedPush] {
        // An app's queued pushes may all wait behind older pushes of their activities: then the next app's turn.
        for appID in try await self.appsByTurn(now: now) {
            let claimed = try await self.claimQueuedPushes(of: appID, worker: worker, now: now, lease: lease, limit: limit)
            if !claimed.isEmpty { return claimed }
        }
        return try await self.claimPart(worker: worker, lease: lease)
    }

    /// Apps with pushes due, the one whose last claim is oldest (or that never had one) first. The apps are found by
    /// skipping through the index of unfinished pushes, one probe per app, however long their queues. Every such app
    /// is listed: one whose queued pushes all wait behind older pushes of their activities must not hide the others.
    /// Whether an app has a push due is a scalar subquery, one probe per app: as an `EXISTS`, PostgreSQL joined the
    /// apps to every unfinished push due (25 ms a claim, each time, behind a drained burst whose index entries
    /// vacuum had not yet removed).
    private func appsByTurn(now: Date) async throws(StoreError) -> [Int64] {
        try await StoreError.mapping { try await AppsByTurn(now: now).rows(on: self.client, prepared: self.preparedStatements, logger: self.logger) }
    }

    struct AppsByTurn: PostgresPreparedStatement {
        static let sql = """
            WITH RECURSIVE waiting (app_id) AS (
                (SELECT app_id FROM pushes WHERE state = 'queued' ORDER BY app_id LIMIT 1)
                UNION ALL
                SELECT (SELECT p.app_id FROM pushes p WHERE p.state = 'queued' AND p.app_id > w.app_id ORDER BY p.app_id LIMIT 1)
                FROM waiting w WHERE w.app_id IS NOT NULL)
            SELECT w.app_id FROM waiting w LEFT JOIN dispatch_turns t ON t.app_id = w.app_id
            WHERE w.app_id IS NOT NULL
              AND (SELECT 1 FROM pushes p WHERE p.app_id = w.app_id AND p.state = 'queued' AND p.not_before <= $1 LIMIT 1) IS NOT NULL
            ORDER BY t.last_claimed_at NULLS FIRST, w.app_id
            """
        var now: Date

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(self.now)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }

    private func claimPart(worker: String, lease: Duration) async throws(StoreError) -> [ClaimedPush] {
        let claim = ClaimPart(worker: worker, leaseSeconds: Self.seconds(lease))
        return try await self.claimed(try await StoreError.mapping {
            try await claim.rows(on: self.client, prepared: self.preparedStatements, logger: self.logger)
        })
    }

    /// The oldest part whose retry is due or whose lease expired.
    struct ClaimPart: RawRowsStatement {
        static let sql = """
            WITH next AS (
                SELECT app_id, push_id, part FROM push_parts
                WHERE state IN ('queued', 'sending')
                  AND CASE state WHEN 'queued' THEN retry_at IS NULL OR retry_at <= now() ELSE lease_expires_at < now() END
                ORDER BY accepted_at, part
                LIMIT 1
                FOR UPDATE SKIP LOCKED),
            part AS (
                UPDATE push_parts t SET state = 'sending', claimed_by = $1, lease_expires_at = now() + make_interval(secs => $2)
                FROM next WHERE t.app_id = next.app_id AND t.push_id = next.push_id AND t.part = next.part
                RETURNING t.*)
            SELECT \(ClaimedPush.Column.selectList) FROM part JOIN pushes p ON p.app_id = part.app_id AND p.push_id = part.push_id
            """
        var worker: String
        var leaseSeconds: Double

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(self.worker)
            bindings.append(self.leaseSeconds)
            return bindings
        }
    }

    /// The app's oldest claimable queued push, and when it is per-user, the app's next claimable per-user pushes after
    /// it (skipping others, which wait for the app's next turn), up to `limit`.
    ///
    /// The claim is planned with `enable_sort` off, so that the app's queued pushes are read in acceptance order through
    /// `pushes_queued_by_acceptance`, each candidate's order probes run only until `limit` pass, and each probe reads
    /// the index its order names (``ActivityOrder``). The planner cannot tell how many candidates pass the probes, and
    /// guessing few, it read and probed every queued push of the app and sorted them: a second a claim behind 15,000
    /// queued per-user pushes, with the rows it locked on the way (`FOR UPDATE` keeps a lock on a row that another
    /// worker claimed meanwhile, though it skips it) holding up the other workers' records until it committed.
    private func claimQueuedPushes(
        of appID: Int64, worker: String, now: Date, lease: Duration, limit: Int
    ) async throws(StoreError) -> [ClaimedPush] {
        let claim = ClaimQueuedPushes(appID: appID, worker: worker, now: now, leaseSeconds: Self.seconds(lease), limit: max(limit, 1))
        return try await self.claimed(try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                try await connection.query("SET LOCAL enable_sort = off", logger: self.logger)
                return try await claim.rows(on: connection, prepared: self.preparedStatements, logger: self.logger)
            }
        })
    }

    struct ClaimQueuedPushes: RawRowsStatement {
        static let sql = """
            WITH candidates AS (
                SELECT p.app_id, p.push_id, p.accepted_at, \(ClaimedPush.perUserCondition) AS per_user FROM pushes p
                WHERE p.app_id = $1 AND p.state = 'queued' AND p.not_before <= $3
                  AND \(ActivityOrder.mayBeClaimed)
                ORDER BY p.accepted_at
                LIMIT $5
                FOR UPDATE SKIP LOCKED),
            next AS (
                SELECT app_id, push_id FROM (
                    SELECT app_id, push_id, per_user, first_value(per_user) OVER oldest AS batch, row_number() OVER oldest AS n
                    FROM candidates WINDOW oldest AS (ORDER BY accepted_at)) c
                WHERE c.n = 1 OR (c.batch AND c.per_user)),
            p AS (
                UPDATE pushes SET state = 'sending', claimed_by = $2, started_at = $3, attempts = attempts + 1
                FROM next WHERE pushes.app_id = next.app_id AND pushes.push_id = next.push_id
                RETURNING pushes.*),
            part AS (
                INSERT INTO push_parts (app_id, push_id, part, after_channel_id, through_channel_id, cursor_channel_id,
                                        state, claimed_by, lease_expires_at, accepted_at)
                SELECT app_id, push_id, 0, $6, $7, $6, 'sending', $2, now() + make_interval(secs => $4), accepted_at
                FROM p),
            turn AS (
                INSERT INTO dispatch_turns (app_id, last_claimed_at) SELECT app_id, clock_timestamp() FROM p LIMIT 1
                ON CONFLICT (app_id) DO UPDATE SET last_claimed_at = EXCLUDED.last_claimed_at)
            -- Each push with its part as inserted (the whole range, nothing counted yet), not a join of the two: both
            -- look like a row to the planner, which would compare every part with every push.
            SELECT \(ClaimedPush.Column.selectList)
            FROM p, LATERAL (SELECT 0::smallint AS part, $7::uuid AS through_channel_id, $6::uuid AS cursor_channel_id, '{}'::jsonb AS counts) part
            ORDER BY p.accepted_at
            """
        var appID: Int64
        var worker: String
        var now: Date
        var leaseSeconds: Double
        var limit: Int

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(self.appID)
            bindings.append(self.worker)
            bindings.append(self.now)
            bindings.append(self.leaseSeconds)
            bindings.append(self.limit)
            bindings.append(ChannelIDRange.all.after)
            bindings.append(ChannelIDRange.all.through)
            return bindings
        }
    }

    /// A lease's length in seconds, for `now() + make_interval(secs => …)`: leases run by the database's clock.
    static func seconds(_ lease: Duration) -> Double {
        max(lease.seconds, 1)
    }

    /// The claimed rows, each read as a part; one that cannot be read fails its push (tried again it would fail the
    /// same way, and hold its name up) and is left out.
    private func claimed(_ rows: [PostgresRow]) async throws(StoreError) -> [ClaimedPush] {
        var claimed: [ClaimedPush] = []
        for row in rows {
            let named = NamedRow<ClaimedPush.Column>(row)
            let keys: (appID: Int64, pushID: UUID)
            do {
                keys = try ClaimedPush.keys(of: named)
            } catch {
                throw .database(reason: "a claimed push's keys cannot be read: \(error)")
            }
            do {
                claimed.append(try ClaimedPush(named))
            } catch {
                try await StoreError.mapping {
                    try await self.client.withTransaction(logger: self.logger) { connection in
                        try await Self.failPush(
                            appID: keys.appID, pushID: keys.pushID, reason: "the stored push cannot be read: \(error)", on: connection,
                            logger: self.logger)
                    }
                }
                PushMetrics.finished(.failed)
                self.logger.error("push failed: it cannot be read", metadata: ["push.id": "\(keys.pushID.lowercaseString)", "error": "\(error)"])
            }
        }
        return claimed
    }

    /// Renews the parts' leases while a batch is in flight; `false` when the worker no longer holds one of them:
    /// another worker claimed it after its lease ran out, or it was queued again. (A part the worker finished itself is
    /// still its own.) The parts are found by their keys with `= ANY` (see ``record(perUser:worker:now:)``).
    public func renewLeases(of parts: [ClaimedPush], worker: String, lease: Duration) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await self.client.query(
                """
                WITH held AS (
                    SELECT t.app_id, t.push_id, t.part, t.claimed_by IS NOT DISTINCT FROM \(worker) AS own, t.state = 'sending' AS sending
                    FROM push_parts t
                    JOIN unnest(\(parts.map(\.appID))::bigint[], \(parts.map(\.pushID))::uuid[], \(parts.map(\.part))::smallint[])
                         AS r (app_id, push_id, part) ON t.app_id = r.app_id AND t.push_id = r.push_id AND t.part = r.part
                    WHERE t.app_id = ANY(\(parts.map(\.appID))) AND t.push_id = ANY(\(parts.map(\.pushID)))
                    FOR UPDATE OF t
                ), renewed AS (
                    UPDATE push_parts t SET lease_expires_at = now() + make_interval(secs => \(Self.seconds(lease)))
                    FROM held h
                    WHERE t.app_id = h.app_id AND t.push_id = h.push_id AND t.part = h.part AND h.own AND h.sending
                )
                SELECT count(*) FILTER (WHERE NOT own)::int FROM held
                """,
                logger: self.logger
            ).decode(Int.self).array() == [0]
        }
    }

    /// Whether a newer update or end of the push's name to the same audience as written is waiting or being sent: then
    /// the rest of this update is superseded, because its devices show only the newest state. (Pushes to other
    /// audiences are ordered activity by activity as they are sent, ``reserve(_:for:)``.)
    public func isSuperseded(_ push: ClaimedPush) async throws(StoreError) -> Bool {
        guard case .liveActivity(.update, _, _) = push.kind else { return false }
        return try await StoreError.mapping {
            // A range of pushes_by_activity: the push's own name and audience (one expression, which no index of a
            // name's pushes answers but this one), then newer timestamps, ordered by the index's columns, and
            // unfinished in the form no partial index answers (ActivityOrder.unfinished).
            let rows = try await self.client.query(
                """
                SELECT (
                    SELECT q.push_id FROM pushes q
                    WHERE q.app_id = \(push.appID)
                      AND md5(q.audience::text || q.activity_name) = (
                          SELECT md5(p.audience::text || p.activity_name) FROM pushes p WHERE p.app_id = \(push.appID) AND p.push_id = \(push.pushID))
                      AND q.aps_timestamp >= \(push.timestamp) AND (q.aps_timestamp, q.push_id) > (\(push.timestamp), \(push.pushID))
                      AND \(unescaped: ActivityOrder.unfinished) AND q.event IN ('update', 'end')
                    ORDER BY q.app_id, md5(q.audience::text || q.activity_name), q.aps_timestamp LIMIT 1) IS NOT NULL
                """,
                logger: self.logger
            )
            return try await rows.decode(Bool.self).array().first ?? false
        }
    }

    /// Whether the update may find some of its activities already sent a newer timestamp (``ActivityOrder/mayBeStale``):
    /// then its targets are each checked against what their activity was sent.
    public func mayBeStale(_ push: ClaimedPush) async throws(StoreError) -> Bool {
        guard case .liveActivity(.update, _, _) = push.kind else { return false }
        return try await StoreError.mapping {
            try await self.client.query(
                "SELECT \(unescaped: ActivityOrder.mayBeStale) FROM pushes p WHERE p.app_id = \(push.appID) AND p.push_id = \(push.pushID)",
                logger: self.logger
            ).decode(Bool.self).array().first ?? false
        }
    }

    /// Gives the part back at once (a worker shutting down): another worker resumes it from its cursor. The part is
    /// no longer the worker's, so a renewal of its lease still in flight (a cancelled store call may land after it
    /// returns) finds nothing to renew instead of holding the part for another lease.
    public func release(_ push: ClaimedPush, worker: String) async throws(StoreError) {
        _ = try await StoreError.mapping {
            try await self.client.query(
                """
                UPDATE push_parts SET lease_expires_at = now(), claimed_by = NULL
                WHERE \(held: HeldPart(push, worker: worker))
                """,
                logger: self.logger)
        }
    }
}
