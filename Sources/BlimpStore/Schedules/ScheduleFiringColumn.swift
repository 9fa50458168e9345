import BlimpCore
import Foundation
import PostgresNIO

/// The `schedule_firings` row as a worker records a firing, described once: each case a column, its type in the
/// insert's JSON record and its value for one firing.
enum ScheduleFiringColumn: String, RecordColumn {
    case appID = "app_id", scheduleID = "schedule_id", occurrence, timeZone = "time_zone", pushID = "push_id", skipped
    case firedAt = "fired_at"

    var recordType: String {
        switch self {
        case .appID, .occurrence, .firedAt: "bigint"
        case .scheduleID, .pushID: "uuid"
        case .timeZone, .skipped: "text"
        }
    }

    var valueExpression: String {
        switch self {
        case .occurrence: "\(RecordTime.expression("r.occurrence")) AT TIME ZONE 'UTC'"
        case .firedAt: RecordTime.expression("r.fired_at")
        default: "r.\(self.rawValue)"
        }
    }

    /// The column's value for `firing` of the schedule, which queued `pushID` (or none, and the firing says why) at
    /// `now`; `nil` is NULL.
    func value(of firing: SchedulePlan.Firing, appID: Int64, scheduleID: UUID, pushID: UUID?, now: Date) -> RawJSON? {
        switch self {
        case .appID: .integer(appID)
        case .scheduleID: .string(scheduleID.lowercaseString)
        case .occurrence: RecordTime.value(firing.occurrence)
        case .timeZone: .string(firing.zone)
        case .pushID: pushID.map { .string($0.lowercaseString) }
        case .skipped: pushID == nil ? firing.outcome.reason.map(RawJSON.string) : nil
        case .firedAt: RecordTime.value(now)
        }
    }
}
