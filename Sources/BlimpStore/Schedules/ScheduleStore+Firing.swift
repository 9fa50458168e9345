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
    /// What one firing in one zone did.
    private enum Firing {
        case queued(UUID)
        case skipped(String)
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

    /// Fires up to `limit` due schedules in one transaction; returns how many it looked at.
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
                for row in rows {
                    let (appID, scheduleID, name, local, time, recurring, push, next, grace, defaultZone) = try row.decode(
                        (Int64, UUID, String?, Bool, Date, String?, String, Date?, Int, String).self)
                    var due = Due(
                        appID: appID, scheduleID: scheduleID, nextOccurrence: next, grace: TimeInterval(grace), defaultZone: defaultZone)
                    do {
                        due.schedule = try Self.stored(name: name, local: local, time: time, recurring: recurring, push: push)
                    } catch {
                        due.unreadable = "the schedule cannot be read: \(error)"
                    }
                    try await self.fire(due, now: now, channels: liveActivityChannels, on: connection)
                }
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

    private func fire(_ due: Due, now: Date, channels: LiveActivityChannelStore, on connection: PostgresConnection) async throws {
        guard let schedule = due.schedule, var occurrence = due.nextOccurrence else {
            try await self.finish(due, next: nil, fireAt: nil, error: due.unreadable, now: now, on: connection)
            return
        }
        let lastOffset = schedule.time.isLocal ? ScheduledPush.latestOffset : 0
        // Occurrences every zone passed while Blimp was down: only the latest is looked at.
        while let later = schedule.occurrence(after: occurrence), later.addingTimeInterval(lastOffset) <= now { occurrence = later }
        let zones = schedule.time.isLocal ? try await Self.zones(appID: due.appID, defaultZone: due.defaultZone, on: connection, logger: self.logger) : [""]
        var upcoming: Date?
        var incomplete: Date?
        var error: String?
        var current: Date? = occurrence
        while let time = current, time.addingTimeInterval(schedule.time.isLocal ? -ScheduledPush.earliestOffset : 0) <= now {
            let fired = try await self.firedZones(of: due, at: time, on: connection)
            for (zone, instant) in try await Self.instants(of: time, in: zones, on: connection, logger: self.logger) where !fired.contains(zone) {
                guard instant <= now else {
                    upcoming = min(upcoming ?? instant, instant)
                    continue
                }
                let firing: Firing
                if now.timeIntervalSince(instant) > due.grace {
                    firing = .skipped("missed: due at \(AirshipDate.format(instant)) UTC, more than the app's grace period of \(Int(due.grace)) s ago")
                } else {
                    let local = zone.isEmpty ? nil : LocalTimeZone(name: zone, isDefault: zone == due.defaultZone)
                    firing = try await self.queue(schedule.push, appID: due.appID, zone: local, channels: channels, now: now, on: connection)
                }
                if case .skipped(let reason) = firing { error = reason }
                try await self.record(firing, of: due, at: time, zone: zone, now: now, on: connection)
            }
            if incomplete == nil, time.addingTimeInterval(lastOffset) > now { incomplete = time }
            current = schedule.occurrence(after: time)
        }
        if let time = current {
            let first = time.addingTimeInterval(schedule.time.isLocal ? -ScheduledPush.earliestOffset : 0)
            upcoming = min(upcoming ?? first, first)
        }
        try await self.finish(due, next: upcoming == nil ? nil : incomplete ?? current, fireAt: upcoming, error: error, now: now, on: connection)
    }

    /// Queues the push as `POST /api/push` would (a live activity channel's rules checked again), within the firing's
    /// transaction.
    private func queue(
        _ push: Push, appID: Int64, zone: LocalTimeZone?, channels: LiveActivityChannelStore, now: Date, on connection: PostgresConnection
    ) async throws -> Firing {
        let newest = try await channels.newest(names: BroadcastRules.names(in: [push]), appID: appID)
        let broadcast: [String: String]
        do {
            broadcast = try BroadcastRules.channels(for: [push], paths: [""], newest: newest, timestamp: Int64(now.timeIntervalSince1970))
        } catch {
            return .skipped("refused: \(error.field.message)")
        }
        var submission = PushSubmission(appID: appID, pushes: [push], idempotencyKey: nil, broadcastChannels: broadcast)
        submission.localTimeZone = zone
        switch try await PushIntake.accept([submission], on: connection, logger: self.logger, now: now).first {
        case .accepted(_, let pushIDs)?:
            PushMetrics.accepted.increment(by: Int64(pushIDs.count))
            return .queued(pushIDs[0])
        case .staleTimestamp(_, let name, let timestamp, let last)?:
            return .skipped("refused: the timestamp \(timestamp) is not after \(last), the last accepted for '\(name)'")
        case nil:
            return .skipped("refused: nothing was queued")
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

    private func record(_ firing: Firing, of due: Due, at occurrence: Date, zone: String, now: Date, on connection: PostgresConnection) async throws {
        let (pushID, skipped): (UUID?, String?) =
            switch firing {
            case .queued(let id): (id, nil)
            case .skipped(let reason): (nil, reason)
            }
        try await connection.query(
            """
            INSERT INTO schedule_firings (app_id, schedule_id, occurrence, time_zone, push_id, skipped, fired_at)
            VALUES (\(due.appID), \(due.scheduleID), \(occurrence)::timestamptz AT TIME ZONE 'UTC', \(zone), \(pushID), \(skipped), \(now))
            """,
            logger: self.logger)
        if let pushID { self.logger.info("schedule fired", metadata: ["schedule.id": "\(due.scheduleID.lowercaseString)", "push.id": "\(pushID.lowercaseString)", "time_zone": "\(zone)"]) }
        if let skipped { self.logger.warning("schedule occurrence not sent", metadata: ["schedule.id": "\(due.scheduleID.lowercaseString)", "reason": "\(skipped)", "time_zone": "\(zone)"]) }
    }

    private func finish(_ due: Due, next: Date?, fireAt: Date?, error: String?, now: Date, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE schedules SET next_occurrence = \(next)::timestamptz AT TIME ZONE 'UTC', next_fire_at = \(fireAt),
                   last_error = coalesce(\(error), last_error), last_error_at = CASE WHEN \(error)::text IS NULL THEN last_error_at ELSE \(now) END
            WHERE app_id = \(due.appID) AND schedule_id = \(due.scheduleID)
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
