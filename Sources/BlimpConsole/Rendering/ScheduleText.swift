import BlimpCore
import Foundation

/// How the console words a schedule's times and recurrence.
enum ScheduleText {
    /// `2026-11-23 18:30:00 UTC`, or `… on each device's clock` for a local-time schedule.
    static func time(_ wallClock: Date, local: Bool) -> String {
        local ? AirshipDate.format(wallClock, separator: " ") + " on each device's clock" : Format.time(wallClock)
    }

    /// `every 2 days`, `every week on monday, friday until …, with 1 exclusion`; `once` without a recurrence.
    static func recurrence(_ recurrence: Recurrence?, local: Bool) -> String {
        guard let recurrence else { return "once" }
        let unit: String = switch recurrence.cadence {
        case .hourly: "hour"
        case .daily: "day"
        case .weekly: "week"
        case .monthly: "month"
        case .yearly: "year"
        }
        var text = recurrence.count == 1 ? "every \(unit)" : "every \(recurrence.count) \(unit)s"
        if recurrence.cadence == .weekly { text += " on " + recurrence.daysOfWeek.sorted().map(\.rawValue).joined(separator: ", ") }
        if let end = recurrence.endTime { text += " until " + Self.time(end, local: local) }
        if !recurrence.exclusions.isEmpty {
            text += ", with \(recurrence.exclusions.count) exclusion\(recurrence.exclusions.count == 1 ? "" : "s")"
        }
        return text
    }
}
