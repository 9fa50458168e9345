import BlimpCore
import Foundation
import Testing

/// Occurrences of recurring schedules, on wall-clock times.
struct RecurrenceTests {
    static func time(_ text: String) -> Date { AirshipDate.parse(text)! }

    /// The first `count` occurrences from `start`.
    static func occurrences(_ recurrence: Recurrence, from start: String, count: Int) -> [String] {
        var times: [String] = []
        var next = recurrence.occurrence(from: Self.time(start), atOrAfter: Self.time(start))
        while let time = next, times.count < count {
            times.append(AirshipDate.format(time))
            next = recurrence.occurrence(from: Self.time(start), atOrAfter: time.addingTimeInterval(1))
        }
        return times
    }

    @Test func everyFewHoursDaysMonthsAndYears() {
        #expect(Self.occurrences(Recurrence(cadence: .hourly, count: 5), from: "2026-03-01T22:00:00", count: 3)
                == ["2026-03-01T22:00:00", "2026-03-02T03:00:00", "2026-03-02T08:00:00"])
        #expect(Self.occurrences(Recurrence(cadence: .daily, count: 2), from: "2026-02-27T18:00:00", count: 3)
                == ["2026-02-27T18:00:00", "2026-03-01T18:00:00", "2026-03-03T18:00:00"])
        // The 31st falls on each month's last day when it has none.
        #expect(Self.occurrences(Recurrence(cadence: .monthly, count: 1), from: "2026-01-31T09:00:00", count: 4)
                == ["2026-01-31T09:00:00", "2026-02-28T09:00:00", "2026-03-31T09:00:00", "2026-04-30T09:00:00"])
        #expect(Self.occurrences(Recurrence(cadence: .yearly, count: 1), from: "2028-02-29T12:00:00", count: 2)
                == ["2028-02-29T12:00:00", "2029-02-28T12:00:00"])
    }

    @Test func weeklyOnItsDaysEveryOtherWeek() {
        // 2026-11-26 is a Thursday: that week's Thursday and Sunday, then two weeks on.
        let recurrence = Recurrence(cadence: .weekly, count: 2, daysOfWeek: [.monday, .thursday, .sunday])
        #expect(Self.occurrences(recurrence, from: "2026-11-26T20:00:00", count: 4)
                == ["2026-11-26T20:00:00", "2026-11-29T20:00:00", "2026-12-07T20:00:00", "2026-12-10T20:00:00"])
    }

    @Test func exclusionsAndTheEnd() {
        // Nights (22:00 to 05:59) and weekends are skipped; every part of an exclusion must match.
        let recurrence = Recurrence(
            cadence: .hourly, count: 3, endTime: Self.time("2026-11-30T12:00:00"),
            exclusions: [.init(hours: (22, 5)), .init(days: [.saturday, .sunday])])
        #expect(Self.occurrences(recurrence, from: "2026-11-27T18:00:00", count: 10)
                == ["2026-11-27T18:00:00", "2026-11-27T21:00:00", "2026-11-30T06:00:00", "2026-11-30T09:00:00", "2026-11-30T12:00:00"])
        let both = Recurrence(cadence: .daily, count: 1, exclusions: [.init(hours: (8, 8), days: [.friday])])
        #expect(Self.occurrences(both, from: "2026-11-26T08:00:00", count: 2) == ["2026-11-26T08:00:00", "2026-11-28T08:00:00"])
        // Excluded every time: it never fires.
        #expect(Recurrence(cadence: .daily, count: 1, exclusions: [.init(hours: (0, 23))])
                .occurrence(from: Self.time("2026-11-26T08:00:00"), atOrAfter: Self.time("2026-11-26T08:00:00")) == nil)
    }

    @Test func aLongWayOnIsFoundWithoutWalkingThere() {
        let recurrence = Recurrence(cadence: .hourly, count: 1)
        #expect(recurrence.occurrence(from: Self.time("1970-01-01T00:00:00"), atOrAfter: Self.time("2199-12-31T10:30:00"))
                == Self.time("2199-12-31T11:00:00"))
    }
}
