import Foundation

/// A recurring schedule's rule (Airship's `schedule.recurring`): every `count` hours, days, weeks (on the given days),
/// months or years from the schedule's time, until `endTime`, skipping what an exclusion matches.
///
/// Occurrences are wall-clock times (`Date`s read in UTC): for a local-time schedule they are each device's clock, so
/// the series never shifts with daylight-saving time. A month or year that lacks the first occurrence's day (the
/// 31st, 29 February) has its occurrence on its last day.
public struct Recurrence: Sendable, Equatable {
    public enum Cadence: String, Sendable, CaseIterable {
        case hourly, daily, weekly, monthly, yearly
    }

    public var cadence: Cadence
    /// Every how many hours, days, weeks, months or years.
    public var count: Int
    /// For `weekly`: the days it fires on.
    public var daysOfWeek: Set<Weekday>
    /// No occurrence after this wall-clock time.
    public var endTime: Date?
    public var exclusions: [Exclusion]
    /// Airship's `paused`: a paused schedule fires nothing until resumed.
    public var paused: Bool

    /// The largest `count`.
    public static let maximumCount = 1000
    /// The most exclusions a recurrence may have.
    public static let maximumExclusions = 100
    /// How many excluded occurrences in a row are skipped before the recurrence counts as never firing again.
    static let searchLimit = 10_000

    public init(
        cadence: Cadence, count: Int, daysOfWeek: Set<Weekday> = [], endTime: Date? = nil, exclusions: [Exclusion] = [],
        paused: Bool = false
    ) {
        self.cadence = cadence
        self.count = count
        self.daysOfWeek = daysOfWeek
        self.endTime = endTime
        self.exclusions = exclusions
        self.paused = paused
    }

    /// A day of the week, as Airship names them.
    public enum Weekday: String, Sendable, CaseIterable, Comparable {
        case monday, tuesday, wednesday, thursday, friday, saturday, sunday

        /// Monday 0 through Sunday 6.
        var index: Int { Self.allCases.firstIndex(of: self)! }

        init(of date: Date) {
            // Gregorian weekday: Sunday 1 through Saturday 7.
            let weekday = Recurrence.calendar.component(.weekday, from: date)
            self = Self.allCases[(weekday + 5) % 7]
        }

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.index < rhs.index }
    }

    /// Times when nothing is sent (Airship's `exclusions`): an occurrence is skipped when it matches every part an
    /// exclusion has: an hour of the day in `hours` (inclusive, wrapping past midnight when the first is larger),
    /// a time within `dates` (inclusive) and a day in `days`.
    public struct Exclusion: Sendable, Equatable {
        public var hours: (first: Int, last: Int)?
        public var dates: ClosedRange<Date>?
        public var days: Set<Weekday>

        public init(hours: (first: Int, last: Int)? = nil, dates: ClosedRange<Date>? = nil, days: Set<Weekday> = []) {
            self.hours = hours
            self.dates = dates
            self.days = days
        }

        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.hours?.first == rhs.hours?.first && lhs.hours?.last == rhs.hours?.last && lhs.dates == rhs.dates && lhs.days == rhs.days
        }

        func excludes(_ time: Date) -> Bool {
            if let (first, last) = self.hours {
                let hour = Recurrence.calendar.component(.hour, from: time)
                let inside = first <= last ? (first...last).contains(hour) : hour >= first || hour <= last
                guard inside else { return false }
            }
            if let dates = self.dates, !dates.contains(time) { return false }
            if !self.days.isEmpty, !self.days.contains(Weekday(of: time)) { return false }
            return true
        }
    }

    /// Wall-clock arithmetic: the Gregorian calendar in UTC, which has no daylight-saving time.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The first occurrence of the series that begins at `start` that is at or after `earliest`, not excluded and not
    /// after ``endTime``; `nil` when none remains.
    public func occurrence(from start: Date, atOrAfter earliest: Date) -> Date? {
        var index = self.firstIndex(from: start, atOrAfter: earliest)
        for _ in 0..<Self.searchLimit {
            for time in self.occurrences(from: start, index: index) where time >= max(start, earliest) {
                if let end = self.endTime, time > end { return nil }
                if !self.exclusions.contains(where: { $0.excludes(time) }) { return time }
            }
            index += 1
        }
        return nil
    }

    /// The series' occurrences in its `index`th period (`count` hours, days, weeks, months or years) after `start`.
    private func occurrences(from start: Date, index: Int) -> [Date] {
        let calendar = Self.calendar
        switch self.cadence {
        case .hourly: return [start.addingTimeInterval(TimeInterval(index * self.count * 3600))]
        case .daily: return [start.addingTimeInterval(TimeInterval(index * self.count * 86_400))]
        case .monthly: return calendar.date(byAdding: .month, value: index * self.count, to: start).map { [$0] } ?? []
        case .yearly: return calendar.date(byAdding: .year, value: index * self.count, to: start).map { [$0] } ?? []
        case .weekly:
            // The week (Monday first) of `start`, moved on by whole periods, on each chosen day at `start`'s time.
            let monday = start.addingTimeInterval(-TimeInterval(Weekday(of: start).index * 86_400))
            let week = monday.addingTimeInterval(TimeInterval(index * self.count * 7 * 86_400))
            return self.daysOfWeek.sorted().map { week.addingTimeInterval(TimeInterval($0.index * 86_400)) }
        }
    }

    /// The period in which occurrences at or after `earliest` begin: skips whole periods at once.
    private func firstIndex(from start: Date, atOrAfter earliest: Date) -> Int {
        let elapsed = earliest.timeIntervalSince(start)
        guard elapsed > 0 else { return 0 }
        let period: TimeInterval
        switch self.cadence {
        case .hourly: period = 3600
        case .daily: period = 86_400
        case .weekly: period = 7 * 86_400
        case .monthly: period = 31 * 86_400
        case .yearly: period = 366 * 86_400
        }
        // A lower bound (months and years are taken at their longest): the search goes on from there.
        return max(0, Int(elapsed / (period * TimeInterval(self.count))) - 1)
    }
}
