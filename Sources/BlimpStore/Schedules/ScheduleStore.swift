import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Airship's schedules (`/api/schedules`) in PostgreSQL: created, read, replaced, paused, resumed and cancelled here;
/// fired by workers (`ScheduleStore+Firing`).
public struct ScheduleStore: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
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
            self.init(
                scheduleID: scheduleID, schedule: schedule, pushIDs: [], nextOccurrence: ScheduleState(first: schedule, now: now).nextOccurrence, paused: schedule.recurrence?.paused ?? false,
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
    /// a start's end so).
    static func insert(
        _ schedules: [(UUID, ScheduledPush)], appID: Int64, now: Date, on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !schedules.isEmpty else { return }
        try await connection.query(ScheduleColumn.insert(schedules, appID: appID, now: now), logger: logger)
    }

    /// Replaces the schedule with `schedule` (Airship's `PUT`: the whole object; a recurrence's `paused` is taken as
    /// given), with its `schedule.changed` entry by `origin`; `false` when there is no such schedule.
    public func replace(
        _ scheduleID: UUID, with schedule: ScheduledPush, appID: Int64, now: Date, by origin: AuditOrigin
    ) async throws(StoreError) -> Bool {
        let state = ScheduleState(first: schedule, now: now)
        let entry = origin.entry(appID: appID, .scheduleChanged, subject: scheduleID.lowercaseString, details: schedule.auditDetails)
        return try await self.audited(entry, at: now) { connection in
            try await connection.query(
                """
                UPDATE schedules SET name = \(schedule.name), local = \(schedule.time.isLocal),
                       scheduled_time = \(schedule.time.wallClock)::timestamptz AT TIME ZONE 'UTC',
                       recurring = \(schedule.recurrence.map { ScheduledPush.json($0).text })::jsonb, push = \(schedule.push.request.text)::jsonb,
                       paused = \(schedule.recurrence?.paused ?? false),
                       next_occurrence = \(state.nextOccurrence)::timestamptz AT TIME ZONE 'UTC', next_fire_at = \(state.fireAt), updated_at = \(now)
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
        let state = paused ? ScheduleState(nextOccurrence: record.nextOccurrence, fireAt: nil) : ScheduleState(first: schedule, now: now)
        let entry = origin.entry(appID: appID, paused ? .schedulePaused : .scheduleResumed, subject: scheduleID.lowercaseString)
        return try await self.audited(entry, at: now) { connection in
            try await connection.query(
                """
                UPDATE schedules SET paused = \(paused), next_occurrence = \(state.nextOccurrence)::timestamptz AT TIME ZONE 'UTC',
                       next_fire_at = \(state.fireAt),
                       recurring = CASE WHEN recurring IS NULL THEN NULL ELSE jsonb_set(recurring, '{paused}', to_jsonb(\(paused))) END,
                       updated_at = \(now)
                WHERE app_id = \(appID) AND schedule_id = \(scheduleID)
                RETURNING 1
                """,
                logger: self.logger
            ).decode(Int.self).array().count == 1
        }
    }

    /// Deletes the schedule (its pushes stay), with its `schedule.cancelled` entry by `origin` and its
    /// `SCHEDULE_CANCELLED` event; `false` when there is no such schedule.
    public func cancel(_ scheduleID: UUID, appID: Int64, at now: Date, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        let entry = origin.entry(appID: appID, .scheduleCancelled, subject: scheduleID.lowercaseString)
        return try await self.audited(entry, at: now) { connection in
            try await connection.query(
                """
                WITH cancelled AS (DELETE FROM schedules WHERE app_id = \(appID) AND schedule_id = \(scheduleID) RETURNING app_id, schedule_id),
                     logged AS (
                         INSERT INTO events (app_id, type, occurred_at, body)
                         SELECT app_id, 'SCHEDULE_CANCELLED', \(now), jsonb_build_object('schedule_id', schedule_id) FROM cancelled)
                SELECT 1 FROM cancelled
                """,
                logger: self.logger
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
        try await self.records(appID: appID, only: scheduleID, limit: 1).first
    }

    /// A page of the app's schedules in creation order, from `start` (a schedule id) on; and the id that starts the next.
    public func list(appID: Int64, limit: Int, start: UUID?) async throws(StoreError) -> (records: [Record], next: UUID?) {
        let records = try await self.records(appID: appID, from: start, limit: limit + 1)
        return (Array(records.prefix(limit)), records.count > limit ? records.last?.scheduleID : nil)
    }

    /// What a read of a record selects.
    private static let recordColumns: [ScheduleColumn.Selected] =
        [.scheduleID, .nextOccurrence, .paused, .lastError, .lastErrorAt, .createdAt, .pushIDs] + ScheduleColumn.Selected.scheduleColumns

    /// The app's schedules in creation order: `only` that one, or from `start` on (none from an unknown `start`).
    private func records(appID: Int64, only: UUID? = nil, from start: UUID? = nil, limit: Int) async throws(StoreError) -> [Record] {
        let query: PostgresQuery = """
            SELECT \(unescaped: ScheduleColumn.Selected.selectList(Self.recordColumns))
            FROM schedules s
            WHERE s.app_id = \(appID) AND (\(only)::uuid IS NULL OR s.schedule_id = \(only))
              AND (\(start)::uuid IS NULL
                   OR (s.created_at, s.schedule_id) >= (SELECT created_at, schedule_id FROM schedules WHERE app_id = \(appID) AND schedule_id = \(start)))
            ORDER BY s.created_at, s.schedule_id
            LIMIT \(limit)
            """
        let rows = try await StoreError.mapping { [query] in try await self.client.query(query, logger: self.logger).collect() }
        var records: [Record] = []
        for row in rows {
            do {
                let row = NamedRow<ScheduleColumn.Selected>(row)
                records.append(Record(
                    scheduleID: try row.decode(.scheduleID), schedule: try ScheduleColumn.Selected.schedule(in: row), pushIDs: try row.decode(.pushIDs),
                    nextOccurrence: try row.decode(.nextOccurrence), paused: try row.decode(.paused), lastError: try row.decode(.lastError),
                    lastErrorAt: try row.decode(.lastErrorAt), createdAt: try row.decode(.createdAt)))
            } catch {
                throw .database(reason: "a schedule cannot be read: \(error)")
            }
        }
        return records
    }
}
