import BlimpCore
import Foundation
import PostgresNIO

/// The `schedules` row as ``ScheduleStore`` creates it, described once: each case a column, its type in the insert's
/// JSON record and its value for one schedule. Times stored as wall clock (`timestamp`) are written and read as a
/// `Date` in UTC.
enum ScheduleColumn: String, RecordColumn {
    case appID = "app_id", scheduleID = "schedule_id", name, local, scheduledTime = "scheduled_time", recurring, push, paused
    case nextOccurrence = "next_occurrence", nextFireAt = "next_fire_at", createdAt = "created_at", updatedAt = "updated_at"

    var recordType: String {
        switch self {
        case .appID, .scheduledTime, .nextOccurrence, .nextFireAt, .createdAt, .updatedAt: "bigint"
        case .scheduleID: "uuid"
        case .recurring, .push: "jsonb"
        case .local, .paused: "boolean"
        case .name: "text"
        }
    }

    var valueExpression: String {
        switch self {
        case .scheduledTime, .nextOccurrence: "\(RecordTime.expression("r.\(self.rawValue)")) AT TIME ZONE 'UTC'"
        case .nextFireAt, .createdAt, .updatedAt: RecordTime.expression("r.\(self.rawValue)")
        default: "r.\(self.rawValue)"
        }
    }

    /// The column's value for `schedule`, created as `scheduleID` of `appID` at `now`; `nil` is NULL.
    func value(of schedule: ScheduledPush, _ scheduleID: UUID, appID: Int64, now: Date) -> RawJSON? {
        switch self {
        case .appID: .integer(appID)
        case .scheduleID: .string(scheduleID.lowercaseString)
        case .name: schedule.name.map(RawJSON.string)
        case .local: .bool(schedule.time.isLocal)
        case .scheduledTime: RecordTime.value(schedule.time.wallClock)
        case .recurring: schedule.recurrence.map(ScheduledPush.json)
        case .push: schedule.push.request
        case .paused: .bool(schedule.recurrence?.paused ?? false)
        case .nextOccurrence: ScheduleState(first: schedule, now: now).nextOccurrence.map(RecordTime.value)
        case .nextFireAt: ScheduleState(first: schedule, now: now).fireAt.map(RecordTime.value)
        case .createdAt, .updatedAt: RecordTime.value(now)
        }
    }

    /// A multi-row insert of `schedules` with their ids, created at `now`.
    static func insert(_ schedules: [(UUID, ScheduledPush)], appID: Int64, now: Date) -> PostgresQuery {
        Self.insert(into: "schedules", schedules.map { id, schedule in
            var record = Record<ScheduleColumn>()
            for column in Self.allCases { record.set(column, column.value(of: schedule, id, appID: appID, now: now)) }
            return record
        })
    }

    /// What reads of schedules select, each column by name, from the schedule (`s`) and, for the firing, its app (`a`).
    enum Selected: String, SelectedColumn {
        case appID = "app_id", scheduleID = "schedule_id", name, local, scheduledTime = "scheduled_time", recurring, push
        case nextOccurrence = "next_occurrence", paused, lastError = "last_error", lastErrorAt = "last_error_at"
        case createdAt = "created_at", pushIDs = "push_ids"
        case grace = "schedule_grace_seconds", defaultZone = "default_time_zone"

        var expression: String {
            switch self {
            case .scheduledTime, .nextOccurrence: "s.\(self.rawValue) AT TIME ZONE 'UTC'"
            case .recurring, .push: "s.\(self.rawValue)::text"
            case .pushIDs:
                """
                coalesce((SELECT array_agg(f.push_id ORDER BY f.fired_at, f.time_zone) FROM schedule_firings f
                          WHERE f.app_id = s.app_id AND f.schedule_id = s.schedule_id AND f.push_id IS NOT NULL), '{}')
                """
            case .grace: "a.schedule_grace_seconds"
            // A default zone PostgreSQL does not know (set by hand) must not fail the firing.
            case .defaultZone: "coalesce((SELECT t.name FROM time_zones t WHERE t.name = a.default_time_zone), 'UTC')"
            default: "s.\(self.rawValue)"
            }
        }

        /// The columns ``schedule(in:)`` reads.
        static let scheduleColumns: [Selected] = [.name, .local, .scheduledTime, .recurring, .push]

        /// The stored schedule in `row`, read back through the parser that checked it (without the checks against the
        /// time).
        static func schedule(in row: NamedRow<Selected>) throws -> ScheduledPush {
            let local: Bool = try row.decode(.local)
            let time: Date = try row.decode(.scheduledTime)
            var schedule: [RawJSON.Member] = [.init(local ? "local_scheduled_time" : "scheduled_time", .string(AirshipDate.format(time)))]
            if try row.decode(.recurring, as: String?.self) != nil { schedule.append(.init("recurring", try row.json(.recurring))) }
            var object: [RawJSON.Member] = [.init("schedule", .object(schedule)), .init("push", try row.json(.push))]
            if let name = try row.decode(.name, as: String?.self) { object.append(.init("name", .string(name))) }
            return try ScheduledPush(.object(object), at: "", now: nil)
        }
    }
}
