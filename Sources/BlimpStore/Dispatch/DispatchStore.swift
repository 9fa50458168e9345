import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// What workers read and write in PostgreSQL: claiming parts of pushes under a lease, resolving their targets in
/// keyset batches (`DispatchStore+Targets`), and recording each batch's outcomes with the part's cursor in one
/// transaction (`DispatchStore+Checkpoints`).
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

    /// Claims the next part to fan out: the oldest queued push that is the first unfinished one of its Live Activity
    /// name (so a name's pushes go out in acceptance order, which their timestamps follow), as one part over every
    /// channel; else a part of a push already being sent that is waiting or whose lease expired (its worker died),
    /// oldest push first. New pushes go first so that a large fan-out's parts never hold a small push up for long.
    public func claim(worker: String, now: Date, lease: Duration) async throws(StoreError) -> ClaimedPush? {
        let until = now.addingTimeInterval(TimeInterval(lease.components.seconds))
        if let push = try await self.claimQueuedPush(worker: worker, now: now, until: until) { return push }
        return try await self.claimPart(worker: worker, now: now, until: until)
    }

    private func claimPart(worker: String, now: Date, until: Date) async throws(StoreError) -> ClaimedPush? {
        try await self.claimed(
            """
            WITH next AS (
                SELECT app_id, push_id, part FROM push_parts
                WHERE state IN ('queued', 'sending') AND (state = 'queued' OR lease_expires_at < \(now))
                ORDER BY accepted_at, part
                LIMIT 1
                FOR UPDATE SKIP LOCKED),
            part AS (
                UPDATE push_parts t SET state = 'sending', claimed_by = \(worker), lease_expires_at = \(until)
                FROM next WHERE t.app_id = next.app_id AND t.push_id = next.push_id AND t.part = next.part
                RETURNING t.*)
            SELECT \(unescaped: Self.claimedColumns) FROM part JOIN pushes p ON p.app_id = part.app_id AND p.push_id = part.push_id
            """)
    }

    private func claimQueuedPush(worker: String, now: Date, until: Date) async throws(StoreError) -> ClaimedPush? {
        let all = ChannelIDRange.all
        return try await self.claimed(
            """
            WITH next AS (
                SELECT p.app_id, p.push_id FROM pushes p
                WHERE p.state = 'queued' AND p.not_before <= \(now)
                  AND NOT EXISTS (
                      SELECT 1 FROM pushes q
                      WHERE q.app_id = p.app_id AND q.activity_name = p.activity_name
                        AND q.state IN ('queued', 'sending') AND q.aps_timestamp < p.aps_timestamp)
                ORDER BY p.accepted_at
                LIMIT 1
                FOR UPDATE SKIP LOCKED),
            p AS (
                UPDATE pushes SET state = 'sending', claimed_by = \(worker), started_at = \(now), attempts = attempts + 1
                FROM next WHERE pushes.app_id = next.app_id AND pushes.push_id = next.push_id
                RETURNING pushes.*),
            part AS (
                INSERT INTO push_parts (app_id, push_id, part, after_channel_id, through_channel_id, cursor_channel_id,
                                        state, claimed_by, lease_expires_at, accepted_at)
                SELECT app_id, push_id, 0, \(all.after), \(all.through), \(all.after), 'sending', \(worker), \(until), accepted_at
                FROM p
                RETURNING *)
            SELECT \(unescaped: Self.claimedColumns) FROM part JOIN p ON p.app_id = part.app_id AND p.push_id = part.push_id
            """)
    }

    /// What a claim returns: the push (`p`) and the part (`part`).
    private static let claimedColumns = """
        p.app_id, p.push_id, p.kind, p.event, p.activity_name, p.attributes_type, p.audience::text, p.apns_body,
        p.push_type, p.priority, p.collapse_id, p.expires_at, p.alerting,
        part.part, part.through_channel_id, part.cursor_channel_id, part.counts::text
        """

    private func claimed(_ query: PostgresQuery) async throws(StoreError) -> ClaimedPush? {
        try await StoreError.mapping {
            let rows = try await self.client.query(query, logger: self.logger)
            typealias Row = (Int64, UUID, String, String?, String?, String?, String, String, String, Int16, String?, Date?, Bool, Int16, UUID, UUID, String)
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
                    part: row.13, through: row.14, cursor: row.15, counts: PushCounts(try RawJSONParser.parse(row.16.utf8)))
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

    /// Gives the part back at once (a worker shutting down): another worker resumes it from its cursor.
    public func release(_ push: ClaimedPush, worker: String, now: Date) async throws(StoreError) {
        try await StoreError.mapping {
            try await self.client.query(
                """
                UPDATE push_parts SET lease_expires_at = \(now)
                WHERE app_id = \(push.appID) AND push_id = \(push.pushID) AND part = \(push.part)
                  AND claimed_by = \(worker) AND state = 'sending'
                """,
                logger: self.logger)
        }
    }
}
