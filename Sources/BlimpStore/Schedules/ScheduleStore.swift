import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Airship's schedules (`/api/schedules`) in PostgreSQL: created, read, replaced, paused, resumed and cancelled here;
/// fired by workers (`ScheduleStore+Firing`).
public struct ScheduleStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// A schedule on record: as given, with the pushes it fired and what went wrong last.
    public struct Record: Sendable {
        public var scheduleID: UUID
        public var schedule: ScheduledPush
        /// Its pushes, oldest first.
        public var pushIDs: [UUID]
        /// The next occurrence not yet fired everywhere (wall-clock); `nil` when none remains.
        public var nextOccurrence: Date?
        public var paused: Bool
        /// The last refusal of a firing or a missed occurrence, in words, and when.
        public var lastError: String?
        public var lastErrorAt: Date?
        public var createdAt: Date

        /// A schedule just created: nothing fired yet.
        public init(created scheduleID: UUID, schedule: ScheduledPush, at now: Date) {
            let (next, _) = ScheduleStore.firstFiring(of: schedule, now: now)
            self.init(
                scheduleID: scheduleID, schedule: schedule, pushIDs: [], nextOccurrence: next, paused: schedule.recurrence?.paused ?? false,
                lastError: nil, lastErrorAt: nil, createdAt: now)
        }

        init(
            scheduleID: UUID, schedule: ScheduledPush, pushIDs: [UUID], nextOccurrence: Date?, paused: Bool, lastError: String?,
            lastErrorAt: Date?, createdAt: Date
        ) {
            self.scheduleID = scheduleID
            self.schedule = schedule
            self.pushIDs = pushIDs
            self.nextOccurrence = nextOccurrence
            self.paused = paused
            self.lastError = lastError
            self.lastErrorAt = lastErrorAt
            self.createdAt = createdAt
        }
    }

    /// Stores `schedules` for `appID` with their `schedule.created` entries by `origin`, in one transaction; returns
    /// their ids in order.
    public func create(_ schedules: [ScheduledPush], appID: Int64, now: Date, by origin: AuditOrigin) async throws(StoreError) -> [UUID] {
        let ids = schedules.map { _ in UUID.random() }
        let entries = zip(ids, schedules).map { id, schedule in
            origin.entry(appID: appID, .scheduleCreated, subject: id.lowercaseString, details: schedule.auditDetails)
        }
        try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { [ids] connection in
            try await Self.insert(Array(zip(ids, schedules)), appID: appID, now: now, on: connection, logger: self.logger)
            return ((), entries)
        }
        return ids
    }

    /// Inserts `schedules` with their ids in one statement, within the caller's transaction (the push intake schedules
    /// a start's end so). Columns go as arrays; a time is epoch seconds (-1 for none), an empty text is none.
    static func insert(
        _ schedules: [(UUID, ScheduledPush)], appID: Int64, now: Date, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !schedules.isEmpty else { return }
        let firings = schedules.map { Self.firstFiring(of: $0.1, now: now) }
        try await connection.query(
            """
            INSERT INTO schedules (app_id, schedule_id, name, local, scheduled_time, recurring, push, paused,
                                   next_occurrence, next_fire_at, created_at, updated_at)
            SELECT \(appID), r.id, NULLIF(r.name, ''), r.local, to_timestamp(r.time) AT TIME ZONE 'UTC', NULLIF(r.recurring, '')::jsonb,
                   r.push::jsonb, r.paused, CASE WHEN r.next < 0 THEN NULL ELSE to_timestamp(r.next) AT TIME ZONE 'UTC' END,
                   CASE WHEN r.fire_at < 0 THEN NULL ELSE to_timestamp(r.fire_at) END, \(now), \(now)
            FROM unnest(\(schedules.map(\.0))::uuid[], \(schedules.map { $0.1.name ?? "" })::text[], \(schedules.map(\.1.time.isLocal))::boolean[],
                        \(schedules.map { $0.1.time.wallClock.timeIntervalSince1970 })::float8[],
                        \(schedules.map { $0.1.recurrence.map { ScheduledPush.json($0).text } ?? "" })::text[],
                        \(schedules.map(\.1.push.request.text))::text[], \(schedules.map { $0.1.recurrence?.paused ?? false })::boolean[],
                        \(firings.map { $0.next?.timeIntervalSince1970 ?? -1 })::float8[], \(firings.map { $0.fireAt?.timeIntervalSince1970 ?? -1 })::float8[])
                 AS r (id, name, local, time, recurring, push, paused, next, fire_at)
            """,
            logger: logger)
    }

    /// Replaces the schedule with `schedule` (Airship's `PUT`: the whole object; a recurrence's `paused` is taken as
    /// given), with its `schedule.changed` entry by `origin`; `false` when there is no such schedule.
    public func replace(
        _ scheduleID: UUID, with schedule: ScheduledPush, appID: Int64, now: Date, by origin: AuditOrigin
    ) async throws(StoreError) -> Bool {
        let (next, fireAt) = Self.firstFiring(of: schedule, now: now)
        let entry = origin.entry(appID: appID, .scheduleChanged, subject: scheduleID.lowercaseString, details: schedule.auditDetails)
        return try await self.audited(entry, at: now) { connection in
            try await connection.query(
                """
                UPDATE schedules SET name = \(schedule.name), local = \(schedule.time.isLocal),
                       scheduled_time = \(schedule.time.wallClock)::timestamptz AT TIME ZONE 'UTC',
                       recurring = \(schedule.recurrence.map { ScheduledPush.json($0).text })::jsonb, push = \(schedule.push.request.text)::jsonb,
                       paused = \(schedule.recurrence?.paused ?? false), next_occurrence = \(next)::timestamptz AT TIME ZONE 'UTC',
                       next_fire_at = \(fireAt), updated_at = \(now)
                WHERE app_id = \(appID) AND schedule_id = \(scheduleID)
                RETURNING 1
                """,
                logger: self.logger
            ).decode(Int.self).array().count == 1
        }
    }

    /// Pauses or resumes the schedule, with its `schedule.paused` or `schedule.resumed` entry by `origin`; `false`
    /// when there is no such schedule. A resumed schedule fires from its next occurrence after now: what came due while
    /// paused is not sent.
    public func setPaused(_ scheduleID: UUID, _ paused: Bool, appID: Int64, now: Date, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        guard let record = try await self.schedule(scheduleID, appID: appID) else { return false }
        var schedule = record.schedule
        schedule.recurrence?.paused = paused
        let (next, fireAt) = paused ? (record.nextOccurrence, nil) : Self.firstFiring(of: schedule, now: now)
        let entry = origin.entry(appID: appID, paused ? .schedulePaused : .scheduleResumed, subject: scheduleID.lowercaseString)
        return try await self.audited(entry, at: now) { connection in
            try await connection.query(
                """
                UPDATE schedules SET paused = \(paused), next_occurrence = \(next)::timestamptz AT TIME ZONE 'UTC', next_fire_at = \(fireAt),
                       recurring = CASE WHEN recurring IS NULL THEN NULL ELSE jsonb_set(recurring, '{paused}', to_jsonb(\(paused))) END,
                       updated_at = \(now)
                WHERE app_id = \(appID) AND schedule_id = \(scheduleID)
                RETURNING 1
                """,
                logger: self.logger
            ).decode(Int.self).array().count == 1
        }
    }

    /// Deletes the schedule (its pushes stay), with its `schedule.cancelled` entry by `origin`; `false` when there is
    /// no such schedule.
    public func cancel(_ scheduleID: UUID, appID: Int64, at now: Date, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        let entry = origin.entry(appID: appID, .scheduleCancelled, subject: scheduleID.lowercaseString)
        return try await self.audited(entry, at: now) { connection in
            try await connection.query(
                "DELETE FROM schedules WHERE app_id = \(appID) AND schedule_id = \(scheduleID) RETURNING 1", logger: self.logger
            ).decode(Int.self).array().count == 1
        }
    }

    /// Runs `change` (`true` when it found the schedule) and records `entry` when it did, in one transaction.
    private func audited(
        _ entry: AuditEntry, at now: Date, _ change: @escaping @Sendable (PostgresConnection) async throws -> Bool
    ) async throws(StoreError) -> Bool {
        try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            let found = try await change(connection)
            return (found, found ? [entry] : [])
        }
    }

    /// The schedule, or `nil`.
    public func schedule(_ scheduleID: UUID, appID: Int64) async throws(StoreError) -> Record? {
        try await self.records(where: "s.schedule_id = $2", binding: scheduleID, appID: appID, limit: 1).first
    }

    /// A page of the app's schedules in creation order, from `start` (a schedule id) on; and the id that starts the next.
    public func list(appID: Int64, limit: Int, start: UUID?) async throws(StoreError) -> (records: [Record], next: UUID?) {
        let records: [Record]
        if let start {
            records = try await self.records(
                where: "(s.created_at, s.schedule_id) >= (SELECT created_at, schedule_id FROM schedules WHERE app_id = $1 AND schedule_id = $2)",
                binding: start, appID: appID, limit: limit + 1)
        } else {
            records = try await self.records(where: "$2::uuid IS NULL", binding: nil, appID: appID, limit: limit + 1)
        }
        return (Array(records.prefix(limit)), records.count > limit ? records.last?.scheduleID : nil)
    }

    private func records(where condition: String, binding: UUID?, appID: Int64, limit: Int) async throws(StoreError) -> [Record] {
        var bindings = PostgresBindings()
        bindings.append(appID)
        bindings.append(binding)
        bindings.append(limit)
        let query = PostgresQuery(
            unsafeSQL: """
                SELECT s.schedule_id, s.name, s.local, s.scheduled_time AT TIME ZONE 'UTC', s.recurring::text, s.push::text,
                       s.next_occurrence AT TIME ZONE 'UTC', s.paused, s.last_error, s.last_error_at, s.created_at,
                       coalesce((SELECT array_agg(f.push_id ORDER BY f.fired_at, f.time_zone) FROM schedule_firings f
                                 WHERE f.app_id = s.app_id AND f.schedule_id = s.schedule_id AND f.push_id IS NOT NULL), '{}')
                FROM schedules s
                WHERE s.app_id = $1 AND \(condition)
                ORDER BY s.created_at, s.schedule_id
                LIMIT $3
                """,
            binds: bindings)
        let rows = try await StoreError.mapping { [query] in try await self.client.query(query, logger: self.logger).collect() }
        var records: [Record] = []
        for row in rows {
            do {
                let (id, name, local, time, recurring, push, next, paused, lastError, lastErrorAt, createdAt, pushIDs) = try row.decode(
                    (UUID, String?, Bool, Date, String?, String, Date?, Bool, String?, Date?, Date, [UUID]).self)
                let schedule = try Self.stored(name: name, local: local, time: time, recurring: recurring, push: push)
                records.append(Record(
                    scheduleID: id, schedule: schedule, pushIDs: pushIDs, nextOccurrence: next, paused: paused, lastError: lastError,
                    lastErrorAt: lastErrorAt, createdAt: createdAt))
            } catch {
                throw .database(reason: "a schedule cannot be read: \(error)")
            }
        }
        return records
    }

    /// A stored schedule read back through the parser that checked it (without the checks against the time).
    static func stored(name: String?, local: Bool, time: Date, recurring: String?, push: String) throws -> ScheduledPush {
        var schedule: [RawJSON.Member] = [.init(local ? "local_scheduled_time" : "scheduled_time", .string(AirshipDate.format(time)))]
        if let recurring { schedule.append(.init("recurring", try RawJSONParser.parse(recurring.utf8, numberLength: RawJSONParser.storedNumberLength))) }
        var object: [RawJSON.Member] = [.init("schedule", .object(schedule)), .init("push", try RawJSONParser.parse(push.utf8, numberLength: RawJSONParser.storedNumberLength))]
        if let name { object.append(.init("name", .string(name))) }
        return try ScheduledPush(.object(object), at: "", now: nil)
    }

    /// The first occurrence to fire from `now` on (wall-clock) and when a worker first looks at it: at the occurrence
    /// for UTC; for local time, when the first time zone reaches it. Both `nil` when nothing remains; the instant
    /// `nil` when paused.
    static func firstFiring(of schedule: ScheduledPush, now: Date) -> (next: Date?, fireAt: Date?) {
        let earliest = schedule.time.isLocal ? now.addingTimeInterval(-ScheduledPush.latestOffset) : now
        let next: Date? =
            if schedule.recurrence == nil {
                schedule.time.wallClock >= earliest ? schedule.time.wallClock : nil
            } else {
                schedule.recurrence?.occurrence(from: schedule.time.wallClock, atOrAfter: earliest)
            }
        guard let next, schedule.recurrence?.paused != true else { return (next, nil) }
        return (next, schedule.time.isLocal ? next.addingTimeInterval(-ScheduledPush.earliestOffset) : next)
    }
}
