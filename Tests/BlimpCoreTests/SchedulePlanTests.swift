import BlimpCore
import Foundation
import Testing

/// Plans of due schedules, without a database: UTC times, local times in zones whose clocks read them at the instants
/// given (as the time zone database would: a daylight-saving gap read in standard time, a repeated hour at its second
/// passing), catching up at most once, the grace period, zones that already fired, and where the schedule stands after.
struct SchedulePlanTests {
    private static func time(_ text: String) -> Date { AirshipDate.parse(text)! }

    /// A schedule at `time` (UTC, or on each device's clock when `local`), recurring as `recurring` says.
    private static func schedule(_ time: String, local: Bool = false, recurring: String? = nil) throws -> ScheduledPush {
        let when = #""\#(local ? "local_scheduled_time" : "scheduled_time")": "\#(time)""# + (recurring.map { #", "recurring": \#($0)"# } ?? "")
        let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "Kick-off"}}"#
        return try ScheduledPush(RawJSONParser.parse(#"{"schedule": {\#(when)}, "push": \#(push)}"#.utf8), at: "", now: nil)
    }

    private static func due(_ schedule: ScheduledPush, next: String, grace: TimeInterval = 3600) -> DueSchedule {
        DueSchedule(schedule: schedule, nextOccurrence: Self.time(next), grace: grace)
    }

    private static func sent(_ occurrence: String, _ zone: String = "", at instant: String? = nil) -> SchedulePlan.Firing {
        SchedulePlan.Firing(occurrence: Self.time(occurrence), zone: zone, instant: Self.time(instant ?? occurrence), outcome: .send)
    }

    private static func state(_ next: String?, _ fireAt: String?) -> ScheduleState {
        ScheduleState(nextOccurrence: next.map(Self.time), fireAt: fireAt.map(Self.time))
    }

    @Test func aUTCTimeFiresAtItsTimeAndAOneTimeScheduleThenEnds() throws {
        let due = Self.due(try Self.schedule("2026-11-26T20:00:00"), next: "2026-11-26T20:00:00")
        #expect(SchedulePlan(due, at: Self.time("2026-11-26T19:59:59")).firings.isEmpty)
        let plan = SchedulePlan(due, at: Self.time("2026-11-26T20:00:01"))
        #expect(plan.firings == [Self.sent("2026-11-26T20:00:00")])
        #expect(plan.next == Self.state(nil, nil) && plan.error == nil)
    }

    @Test func aRecurrenceDownForHoursCatchesUpOnlyItsLatestOccurrence() throws {
        let hourly = try Self.schedule("2026-11-26T20:00:00", recurring: #"{"cadence": {"type": "hourly", "count": 1}}"#)
        let due = Self.due(hourly, next: "2026-11-26T20:00:00")
        #expect(due.occurrences(at: Self.time("2026-11-27T01:10:00")) == [Self.time("2026-11-27T01:00:00")])
        let plan = SchedulePlan(due, at: Self.time("2026-11-27T01:10:00"))
        #expect(plan.firings == [Self.sent("2026-11-27T01:00:00")])
        #expect(plan.next == Self.state("2026-11-27T02:00:00", "2026-11-27T02:00:00"))
    }

    @Test func anOccurrenceFoundPastTheGracePeriodIsMissed() throws {
        let due = Self.due(try Self.schedule("2026-11-26T20:00:00"), next: "2026-11-26T20:00:00", grace: 600)
        #expect(SchedulePlan(due, at: Self.time("2026-11-26T20:10:00")).firings.map(\.outcome) == [.send])
        let plan = SchedulePlan(due, at: Self.time("2026-11-26T20:10:01"))
        let reason = "missed: due at 2026-11-26T20:00:00 UTC, more than the app's grace period of 600 s ago"
        #expect(plan.firings.map(\.outcome) == [.missed(reason: reason)])
        #expect(plan.error == reason && plan.next == Self.state(nil, nil))
    }

    /// 02:30 on the day New York skips from 02:00 to 03:00: Berlin's clocks read it at 01:30 UTC, UTC's at 02:30 and New
    /// York's at 07:30 (the standard-time reading, 03:30 on its clocks). Each zone fires once, as its clocks reach it.
    @Test func aLocalTimeFiresInEachZoneAsItsClocksReachItAcrossADaylightSavingGap() throws {
        let due = Self.due(try Self.schedule("2026-03-08T02:30:00", local: true), next: "2026-03-08T02:30:00")
        let occurrence = Self.time("2026-03-08T02:30:00")
        #expect(due.occurrences(at: Self.time("2026-03-07T12:30:00")) == [occurrence])
        let zones = ["Europe/Berlin", "UTC", "America/New_York"]
        let instants = Dictionary(uniqueKeysWithValues: zip(zones, ["2026-03-08T01:30:00", "2026-03-08T02:30:00", "2026-03-08T07:30:00"]).map {
            (ZonedOccurrence(occurrence: occurrence, zone: $0), Self.time($1))
        })
        func plan(at now: String, fired: [String]) -> SchedulePlan {
            SchedulePlan(
                due, at: Self.time(now), zones: zones, instants: instants,
                fired: Set(fired.map { ZonedOccurrence(occurrence: occurrence, zone: $0) }))
        }
        let berlin = plan(at: "2026-03-08T01:30:01", fired: [])
        #expect(berlin.firings == [Self.sent("2026-03-08T02:30:00", "Europe/Berlin", at: "2026-03-08T01:30:00")])
        #expect(berlin.next == Self.state("2026-03-08T02:30:00", "2026-03-08T02:30:00"))
        // Berlin fired: UTC is next, then New York.
        let utc = plan(at: "2026-03-08T02:30:01", fired: ["Europe/Berlin"])
        #expect(utc.firings == [Self.sent("2026-03-08T02:30:00", "UTC")])
        #expect(utc.next == Self.state("2026-03-08T02:30:00", "2026-03-08T07:30:00"))
        let newYork = plan(at: "2026-03-08T07:30:01", fired: ["Europe/Berlin", "UTC"])
        #expect(newYork.firings == [Self.sent("2026-03-08T02:30:00", "America/New_York", at: "2026-03-08T07:30:00")])
        #expect(newYork.next == Self.state(nil, nil))
        // Every zone fired: nothing is left, whenever a worker looks.
        #expect(plan(at: "2026-03-08T12:00:00", fired: zones).firings.isEmpty)
    }

    /// 01:30 on the day New York repeats that hour: its clocks read it first in EDT (05:30 UTC), then in EST (06:30
    /// UTC); the time zone database answers the second, so New York fires once, then.
    @Test func aRepeatedLocalTimeFiresOnceAtTheInstantGiven() throws {
        let due = Self.due(try Self.schedule("2026-11-01T01:30:00", local: true), next: "2026-11-01T01:30:00")
        let occurrence = Self.time("2026-11-01T01:30:00")
        let instants = [ZonedOccurrence(occurrence: occurrence, zone: "America/New_York"): Self.time("2026-11-01T06:30:00")]
        let early = SchedulePlan(due, at: Self.time("2026-11-01T05:30:01"), zones: ["America/New_York"], instants: instants)
        #expect(early.firings.isEmpty && early.next == Self.state("2026-11-01T01:30:00", "2026-11-01T06:30:00"))
        let plan = SchedulePlan(due, at: Self.time("2026-11-01T06:30:01"), zones: ["America/New_York"], instants: instants)
        #expect(plan.firings == [Self.sent("2026-11-01T01:30:00", "America/New_York", at: "2026-11-01T06:30:00")])
    }

    /// A daily 09:00 in the earliest zone (Kiritimati, UTC+14) and the latest (UTC-12): at 20:00 UTC on the 26th the
    /// 26th has fired in Kiritimati and is due in UTC-12 at 21:00; the 27th is due in Kiritimati now. The schedule
    /// stays on the 26th until UTC-12 fires it, and a worker looks again at 21:00.
    @Test func aRecurringLocalTimeHasTwoOccurrencesInFlightAndStaysOnTheOlderUntilEveryZoneFiredIt() throws {
        let daily = try Self.schedule("2026-11-20T09:00:00", local: true, recurring: #"{"cadence": {"type": "daily", "count": 1}}"#)
        let due = Self.due(daily, next: "2026-11-26T09:00:00")
        let (first, second) = (Self.time("2026-11-26T09:00:00"), Self.time("2026-11-27T09:00:00"))
        let now = Self.time("2026-11-26T20:00:00")
        #expect(due.occurrences(at: now) == [first, second])
        let zones = ["Pacific/Kiritimati", "Etc/GMT+12"]
        var instants: [ZonedOccurrence: Date] = [:]
        for occurrence in [first, second] {
            instants[ZonedOccurrence(occurrence: occurrence, zone: zones[0])] = occurrence.addingTimeInterval(-14 * 3600)
            instants[ZonedOccurrence(occurrence: occurrence, zone: zones[1])] = occurrence.addingTimeInterval(12 * 3600)
        }
        let plan = SchedulePlan(due, at: now, zones: zones, instants: instants, fired: [ZonedOccurrence(occurrence: first, zone: zones[0])])
        #expect(plan.firings == [Self.sent("2026-11-27T09:00:00", "Pacific/Kiritimati", at: "2026-11-26T19:00:00")])
        #expect(plan.next == Self.state("2026-11-26T09:00:00", "2026-11-26T21:00:00"))
        // Once UTC-12 fired the 26th, the schedule moves on to the 27th, looked at next in UTC-12.
        let later = SchedulePlan(
            due, at: Self.time("2026-11-26T21:00:01"), zones: zones, instants: instants,
            fired: [ZonedOccurrence(occurrence: first, zone: zones[0]), ZonedOccurrence(occurrence: second, zone: zones[0])])
        #expect(later.firings == [Self.sent("2026-11-26T09:00:00", "Etc/GMT+12", at: "2026-11-26T21:00:00")])
        #expect(later.next == Self.state("2026-11-27T09:00:00", "2026-11-27T19:00:00"))
    }

    /// A local time passed in every zone while Blimp was down: of a recurrence's occurrences, only those some zone can
    /// still be within 12 hours of are looked at.
    @Test func aLocalRecurrenceCatchesUpOnlyWhatSomeZoneMayStillBeAt() throws {
        let hourly = try Self.schedule("2026-11-26T09:00:00", local: true, recurring: #"{"cadence": {"type": "hourly", "count": 6}}"#)
        let due = Self.due(hourly, next: "2026-11-26T09:00:00")
        // 03:00 on the 27th: 09:00 on the 26th passed in every zone (21:00 UTC), 15:00 (03:00 UTC on the 27th) is the latest
        // that did; every occurrence up to 14 hours ahead (the 27th's 15:00) may be reached somewhere.
        #expect(due.occurrences(at: Self.time("2026-11-27T03:00:00")).map { AirshipDate.format($0) }
                == ["2026-11-26T15:00:00", "2026-11-26T21:00:00", "2026-11-27T03:00:00", "2026-11-27T09:00:00", "2026-11-27T15:00:00"])
    }

    @Test func aRefusedPushIsTheErrorWhenItIsTheLastThingThatWentWrong() throws {
        let due = Self.due(try Self.schedule("2026-03-08T02:30:00", local: true), next: "2026-03-08T02:30:00", grace: 600)
        let occurrence = Self.time("2026-03-08T02:30:00")
        let instants = [
            ZonedOccurrence(occurrence: occurrence, zone: "Europe/Berlin"): Self.time("2026-03-08T01:30:00"),
            ZonedOccurrence(occurrence: occurrence, zone: "UTC"): Self.time("2026-03-08T02:30:00"),
        ]
        var plan = SchedulePlan(due, at: Self.time("2026-03-08T02:30:01"), zones: ["Europe/Berlin", "UTC"], instants: instants)
        #expect(plan.firings.map(\.zone) == ["Europe/Berlin", "UTC"])
        let missed = try #require(plan.error)
        #expect(missed.hasPrefix("missed: due at 2026-03-08T01:30:00 UTC"))
        plan.refuse(1, reason: "refused: the channel was deleted")
        #expect(plan.firings.map(\.outcome) == [.missed(reason: missed), .refused(reason: "refused: the channel was deleted")])
        #expect(plan.error == "refused: the channel was deleted")
    }

    @Test func aScheduleThatCannotBeReadStopsWithWhy() {
        let plan = SchedulePlan.stopped("the schedule cannot be read: push: unknown")
        #expect(plan.firings.isEmpty && plan.next == Self.state(nil, nil) && plan.error == "the schedule cannot be read: push: unknown")
    }

    @Test func aNewScheduleStartsAtItsFirstOccurrenceFromNowOn() throws {
        let now = Self.time("2026-11-26T12:00:00")
        #expect(ScheduleState(first: try Self.schedule("2026-11-26T20:00:00"), now: now) == Self.state("2026-11-26T20:00:00", "2026-11-26T20:00:00"))
        // A local time is first reached 14 hours before UTC reaches it, and passes everywhere 12 hours after.
        #expect(ScheduleState(first: try Self.schedule("2026-11-26T20:00:00", local: true), now: now)
                == Self.state("2026-11-26T20:00:00", "2026-11-26T06:00:00"))
        #expect(ScheduleState(first: try Self.schedule("2026-11-26T01:00:00", local: true), now: now)
                == Self.state("2026-11-26T01:00:00", "2026-11-25T11:00:00"))
        #expect(ScheduleState(first: try Self.schedule("2026-11-25T23:59:59", local: true), now: now) == Self.state(nil, nil))
        #expect(ScheduleState(first: try Self.schedule("2026-11-26T11:00:00"), now: now) == Self.state(nil, nil))
        // A recurrence resumed after its start fires from its next occurrence; a paused one is not looked at.
        let hourly = #"{"cadence": {"type": "hourly", "count": 1}}"#
        #expect(ScheduleState(first: try Self.schedule("2026-11-20T09:30:00", recurring: hourly), now: now)
                == Self.state("2026-11-26T12:30:00", "2026-11-26T12:30:00"))
        let paused = #"{"cadence": {"type": "hourly", "count": 1}, "paused": true}"#
        #expect(ScheduleState(first: try Self.schedule("2026-11-20T09:30:00", recurring: paused), now: now)
                == Self.state("2026-11-26T12:30:00", nil))
    }
}
