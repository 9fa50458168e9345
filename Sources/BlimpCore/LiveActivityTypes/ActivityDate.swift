import Foundation

/// A `Date` as ActivityKit encodes it by default: seconds since 2001-01-01 00:00 UTC (Foundation's reference date),
/// not since 1970. Content is checked to fall between a year before now and five years after (a year is 365 days),
/// which catches the favourite silent failure: Unix seconds, which decode to a date 31 years ahead.
enum ActivityDate {
    static let year: TimeInterval = 365 * 86_400
    /// Seconds from 1970-01-01 to 2001-01-01.
    static let unixSecondsAtReferenceDate: Double = 978_307_200

    /// The plausible values, in seconds since the reference date, around `now`.
    static func plausible(around now: Date) -> ClosedRange<Double> {
        let reference = now.timeIntervalSinceReferenceDate
        return (reference - Self.year)...(reference + 5 * Self.year)
    }

    /// Why `seconds` is not a plausible date around `now`, or `nil` when it is.
    static func problem(with number: JSONNumber, now: Date) -> String? {
        let seconds = number.value
        let plausible = Self.plausible(around: now)
        guard !plausible.contains(seconds) else { return nil }
        var message = "expected a date between a year before now and five years after, in seconds since 2001-01-01"
            + " (\(Int64(plausible.lowerBound))...\(Int64(plausible.upperBound))), got \(number)"
        if plausible.contains(seconds - Self.unixSecondsAtReferenceDate) {
            message += "; it looks like Unix time; ActivityKit's default date encoding counts seconds since 2001-01-01"
        } else if plausible.contains(seconds / 1000 - Self.unixSecondsAtReferenceDate) {
            message += "; it looks like Unix time in milliseconds; ActivityKit's default date encoding counts seconds since 2001-01-01"
        }
        return message
    }
}
