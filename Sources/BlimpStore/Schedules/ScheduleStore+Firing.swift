import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Firing due schedules. A worker locks each due schedule's row (`FOR UPDATE SKIP LOCKED`) and, in the same
/// transaction, queues its push through ``PushIntake`` (the Live Activity timestamp stamped now), records the
/// firing and moves the schedule on: each occurrence fires once whatever the number of workers, and a worker killed
/// midway leaves nothing half done.
///
/// A UTC schedule fires at its time. A local-time schedule fires once per time zone among the app's channels (a
/// channel without a valid zone is in the app's default one), when that zone's clocks reach the time, as PostgreSQL's
/// time zone database says: a time skipped by a daylight-saving change fires as the standard-time reading of it (an
/// hour later on the clock), a repeated time fires once, at its second (standard-time) passing.
///
/// An occurrence found more than the app's grace period late (Blimp was down) is recorded as missed, not sent; of
/// several occurrences missed in a row only the latest is looked at, so a recurring schedule catches up at most once.
extension ScheduleStore {
    /// One occurrence of a schedule in one zone (`""`: UTC), planned in the batch's first pass: a push to queue, or why
    /// none; `pushID` once queued. `move` is its schedule's index in the batch.
    private struct Firing {
        var move: Int
        var occurrence: Date
        var zone: String
        var submission: PushSubmission?
        var skipped: String?
        var pushID: UUID?
    }

    /// How a schedule of the batch moves on: its next occurrence not fired everywhere, when a worker next looks at it,
    /// and the last thing that went wrong.
    private struct Move {
        var due: Due
        var next: Date?
        var fireAt: Date?
        var error: String?
    }

    /// A due schedule as the firing reads it.
    private struct Due {
        var appID: Int64
        var scheduleID: UUID
        var schedule: ScheduledPush?
        var unreadable: String?
        var nextOccurrence: Date?
        var grace: TimeInterval
        var defaultZone: String
    }

    /// Fires up to `limit` due schedules in one transaction, their pushes queued through one intake; returns how many it
    /// looked at.
    public func fireDue(now: Date, limit: Int, liveActivityChannels: LiveActivityChannelStore) async throws(StoreError) -> Int {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let rows = try await connection.query(
                    """
                    SELECT s.app_id, s.schedule_id, s.name, s.local, s.scheduled_time AT TIME ZONE 'UTC', s.recurring::text,
                           s.push::text, s.next_occurrence AT TIME ZONE 'UTC', a.schedule_grace_seconds,
                           -- A default zone PostgreSQL does not know (set by hand) must not fail the firing.
                           coalesce((SELECT t.name FROM time_zones t WHERE t.name = a.default_time_zone), 'UTC')
                    FROM schedules s JOIN apps a ON a.id = s.app_id
                    WHERE s.next_fire_at <= \(now)
                    ORDER BY s.next_fire_at
                    LIMIT \(limit)
                    FOR UPDATE OF s SKIP LOCKED
                    """,
                    logger: self.logger
                ).collect()
                let dues = try rows.map { row in
                    let (appID, scheduleID, name, local, time, recurring, push, next, grace, defaultZone) = try row.decode(
                        (Int64, UUID, String?, Bool, Date, String?, String, Date?, Int, String).self)
                    var due = Due(
                        appID: appID, scheduleID: scheduleID, nextOccurrence: next, grace: TimeInterval(grace), defaultZone: defaultZone)
                    do {
                        due.schedule = try Self.stored(name: name, local: local, time: time, recurring: recurring, push: push)
                    } catch {
                        due.unreadable = "the schedule cannot be read: \(error)"
                    }
                    return due
                }
                let newest = try await Self.newestChannels(of: dues, in: liveActivityChannels)
                var firings: [Firing] = []
                var moves: [Move] = []
                for due in dues {
                    try await self.plan(due, now: now, newest: newest[due.appID] ?? [:], into: &firings, moves: &moves, on: connection)
                }
                try await self.queue(&firings, moves: &moves, now: now, on: connection)
                try await self.record(firings, moves: moves, now: now, on: connection)
                try await self.finish(moves, now: now, on: connection)
                return rows.count
            }
        }
    }

    /// When the next schedule is due, if any is.
    public func nextDue() async throws(StoreError) -> Date? {
        try await StoreError.mapping {
            try await self.client.query("SELECT min(next_fire_at) FROM schedules WHERE next_fire_at IS NOT NULL", logger: self.logger)
                .decode(Date?.self).array().first ?? nil
        }
    }

    /// The newest live activity channel of each name the batch's pushes go to, by app: one lookup per app, not one per
    /// schedule.
    private static func newestChannels(
        of dues: [Due], in channels: LiveActivityChannelStore
    ) async throws -> [Int64: [String: LiveActivityChannel]] {
        var names: [Int64: Set<String>] = [:]
        for due in dues {
            guard let push = due.schedule?.push else { continue }
            names[due.appID, default: []].formUnion(BroadcastRules.names(in: [push]))
        }
        var newest: [Int64: [String: LiveActivityChannel]] = [:]
        for (appID, appNames) in names where !appNames.isEmpty {
            newest[appID] = try await channels.newest(names: Array(appNames), appID: appID)
        }
        return newest
    }

    /// Plans the due schedule's firings: each zone whose clocks reached an in-flight occurrence gets a push (checked
    /// against a live activity channel's rules, `newest` holding its app's channels by name), or is missed past the
    /// grace period; and how the schedule moves on.
    private func plan(
        _ due: Due, now: Date, newest: [String: LiveActivityChannel], into firings: inout [Firing], moves: inout [Move],
        on connection: PostgresConnection
    ) async throws {
        let move = moves.count
        guard let schedule = due.schedule, var occurrence = due.nextOccurrence else {
            moves.append(Move(due: due, next: nil, fireAt: nil, error: due.unreadable))
            return
        }
        let local = schedule.time.isLocal
        let lastOffset = local ? ScheduledPush.latestOffset : 0
        // Occurrences every zone passed while Blimp was down: only the latest is looked at.
        while let later = schedule.occurrence(after: occurrence), later.addingTimeInterval(lastOffset) <= now { occurrence = later }
        let zones = local ? try await Self.zones(appID: due.appID, defaultZone: due.defaultZone, on: connection, logger: self.logger) : []
        var upcoming: Date?
        var incomplete: Date?
        var error: String?
        var current: Date? = occurrence
        while let time = current, time.addingTimeInterval(local ? -ScheduledPush.earliestOffset : 0) <= now {
            // A UTC occurrence is due at its time, in no zone; a local one in each zone that has not fired it yet.
            let instants: [(String, Date)]
            if local {
                let fired = try await self.firedZones(of: due, at: time, on: connection)
                instants = try await Self.instants(of: time, in: zones, on: connection, logger: self.logger).filter { !fired.contains($0.0) }
            } else {
                instants = [("", time)]
            }
            for (zone, instant) in instants {
                guard instant <= now else {
                    upcoming = min(upcoming ?? instant, instant)
                    continue
                }
                var firing = Firing(move: move, occurrence: time, zone: zone)
                if now.timeIntervalSince(instant) > due.grace {
                    firing.skipped = "missed: due at \(AirshipDate.format(instant)) UTC, more than the app's grace period of \(Int(due.grace)) s ago"
                } else {
                    let zone = zone.isEmpty ? nil : LocalTimeZone(name: zone, isDefault: zone == due.defaultZone)
                    switch Self.submission(schedule.push, appID: due.appID, zone: zone, newest: newest, now: now) {
                    case .success(let submission): firing.submission = submission
                    case .failure(let refusal): firing.skipped = refusal.reason
                    }
                }
                error = firing.skipped ?? error
                firings.append(firing)
            }
            if incomplete == nil, time.addingTimeInterval(lastOffset) > now { incomplete = time }
            current = schedule.occurrence(after: time)
        }
        if let time = current {
            let first = time.addingTimeInterval(local ? -ScheduledPush.earliestOffset : 0)
            upcoming = min(upcoming ?? first, first)
        }
        moves.append(Move(due: due, next: upcoming == nil ? nil : incomplete ?? current, fireAt: upcoming, error: error))
    }

    /// Why a firing's push was refused, in words.
    private struct Refusal: Error {
        var reason: String
    }

    /// The push prepared as `POST /api/push` prepares it (``PushPreparation``: a live activity channel's rules checked
    /// again, the payload built, a start's ending scheduled from this firing), or why it is refused, in the API's words.
    /// The Live Activity types were checked when the schedule was created or replaced.
    private static func submission(
        _ push: Push, appID: Int64, zone: LocalTimeZone?, newest: [String: LiveActivityChannel], now: Date
    ) -> Result<PushSubmission, Refusal> {
        let prepared: [PreparedPush]
        do {
            prepared = try PushPreparation.prepare([push], paths: [""], inputs: .init(newestChannels: newest), now: now)
        } catch {
            return .failure(Refusal(reason: "refused: \(error.field.message)"))
        }
        var submission = PushSubmission(appID: appID, prepared: prepared, idempotencyKey: nil)
        submission.localTimeZone = zone
        return .success(submission)
    }

    /// Queues the batch's pushes through one intake, within the firing's transaction; a push the intake refuses (its
    /// own timestamp no longer newer than its name's last) is recorded as skipped.
    private func queue(_ firings: inout [Firing], moves: inout [Move], now: Date, on connection: PostgresConnection) async throws {
        let sending = firings.indices.filter { firings[$0].submission != nil }
        guard !sending.isEmpty else { return }
        let answers = try await PushIntake.accept(sending.map { firings[$0].submission! }, on: connection, logger: self.logger, now: now)
        for (index, answer) in zip(sending, answers) {
            switch answer {
            case .accepted(_, let pushIDs):
                firings[index].pushID = pushIDs.first
                PushMetrics.accepted.increment()
            case .staleTimestamp(_, let name, let timestamp, let last):
                let reason = "refused: the timestamp \(timestamp) is not after \(last), the last accepted for '\(name)'"
                firings[index].skipped = reason
                moves[firings[index].move].error = reason
            }
        }
    }

    private func firedZones(of due: Due, at occurrence: Date, on connection: PostgresConnection) async throws -> Set<String> {
        Set(try await connection.query(
            """
            SELECT time_zone FROM schedule_firings
            WHERE app_id = \(due.appID) AND schedule_id = \(due.scheduleID) AND occurrence = \(occurrence)::timestamptz AT TIME ZONE 'UTC'
            """,
            logger: self.logger
        ).decode(String.self).array())
    }

    /// Records the batch's firings in one statement: each the push it queued, or why none.
    private func record(_ firings: [Firing], moves: [Move], now: Date, on connection: PostgresConnection) async throws {
        guard !firings.isEmpty else { return }
        let recorded = firings.filter { $0.pushID != nil || $0.skipped != nil }
        for firing in recorded {
            let due = moves[firing.move].due
            var metadata: Logger.Metadata = ["schedule.id": "\(due.scheduleID.lowercaseString)", "time_zone": "\(firing.zone)"]
            if let pushID = firing.pushID {
                metadata["push.id"] = "\(pushID.lowercaseString)"
                self.logger.debug("schedule fired", metadata: metadata)
            } else if let skipped = firing.skipped {
                metadata["reason"] = "\(skipped)"
                self.logger.warning("schedule occurrence not sent", metadata: metadata)
            }
        }
        try await connection.query(
            """
            INSERT INTO schedule_firings (app_id, schedule_id, occurrence, time_zone, push_id, skipped, fired_at)
            SELECT app_id, schedule_id, occurrence AT TIME ZONE 'UTC', time_zone, NULLIF(push_id, '')::uuid, NULLIF(skipped, ''), \(now)
            FROM unnest(\(recorded.map { moves[$0.move].due.appID })::bigint[], \(recorded.map { moves[$0.move].due.scheduleID })::uuid[],
                        \(recorded.map(\.occurrence))::timestamptz[], \(recorded.map(\.zone))::text[],
                        \(recorded.map { $0.pushID?.lowercaseString ?? "" })::text[], \(recorded.map { $0.pushID == nil ? $0.skipped ?? "" : "" })::text[])
                 AS r (app_id, schedule_id, occurrence, time_zone, push_id, skipped)
            ON CONFLICT DO NOTHING
            """,
            logger: self.logger)
    }

    /// Moves the batch's schedules on, in one statement (a time as epoch seconds, -1 for none).
    private func finish(_ moves: [Move], now: Date, on connection: PostgresConnection) async throws {
        guard !moves.isEmpty else { return }
        func seconds(_ date: Date?) -> Double { date?.timeIntervalSince1970 ?? -1 }
        try await connection.query(
            """
            UPDATE schedules s
            SET next_occurrence = CASE WHEN r.next < 0 THEN NULL ELSE to_timestamp(r.next) AT TIME ZONE 'UTC' END,
                next_fire_at = CASE WHEN r.fire_at < 0 THEN NULL ELSE to_timestamp(r.fire_at) END,
                last_error = coalesce(NULLIF(r.error, ''), s.last_error),
                last_error_at = CASE WHEN r.error = '' THEN s.last_error_at ELSE \(now) END
            FROM unnest(\(moves.map(\.due.appID))::bigint[], \(moves.map(\.due.scheduleID))::uuid[],
                        \(moves.map { seconds($0.next) })::float8[], \(moves.map { seconds($0.fireAt) })::float8[],
                        \(moves.map { $0.error ?? "" })::text[]) AS r (app_id, schedule_id, next, fire_at, error)
            WHERE s.app_id = r.app_id AND s.schedule_id = r.schedule_id
            """,
            logger: self.logger)
    }

    /// The distinct time zones of the app's channels, a zone PostgreSQL does not know counting as `defaultZone`, which
    /// is always among them. Skips through `channels_by_time_zone`, one probe per zone.
    static func zones(appID: Int64, defaultZone: String, on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await connection.query(
            """
            WITH RECURSIVE reported (zone) AS (
                (SELECT timezone FROM channels WHERE app_id = \(appID) AND timezone IS NOT NULL ORDER BY timezone LIMIT 1)
                UNION ALL
                SELECT (SELECT c.timezone FROM channels c WHERE c.app_id = \(appID) AND c.timezone > r.zone ORDER BY c.timezone LIMIT 1)
                FROM reported r WHERE r.zone IS NOT NULL)
            SELECT t.name FROM reported r JOIN time_zones t ON t.name = r.zone
            UNION SELECT \(defaultZone)
            """,
            logger: logger
        ).decode(String.self).array()
    }

    /// The instant each zone's clocks read `occurrence`; `""` is UTC.
    static func instants(of occurrence: Date, in zones: [String], on connection: PostgresConnection, logger: Logger) async throws -> [(String, Date)] {
        try await connection.query(
            """
            SELECT z, (\(occurrence)::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE (CASE WHEN z = '' THEN 'UTC' ELSE z END)
            FROM unnest(\(zones)::text[]) AS z
            """,
            logger: logger
        ).decode((String, Date).self).array()
    }
}
