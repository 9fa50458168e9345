import Foundation

/// What a due schedule does at one moment, worked out without a database: which occurrence fires in which zone (or is
/// missed, and why), and how the schedule moves on.
///
/// A UTC schedule's occurrence is due at its time. A local-time one is due in each zone when that zone's clocks read
/// it; when that is, the caller looks up in the time zone database (``ZonedOccurrence``) and hands in, with the zones
/// that already fired it. Of occurrences every zone passed (Blimp was down) only the latest is looked at, so a
/// recurring schedule catches up at most once; an occurrence found more than the grace period late is missed, not sent.
public struct SchedulePlan: Sendable, Equatable {
    /// One occurrence in one zone, due now.
    public struct Firing: Sendable, Equatable {
        /// The occurrence (wall-clock, a `Date` read in UTC).
        public var occurrence: Date
        /// The zone whose clocks reached it; `""` for a UTC schedule.
        public var zone: String
        /// When that zone's clocks read the occurrence.
        public var instant: Date
        public var outcome: Outcome

        public init(occurrence: Date, zone: String, instant: Date, outcome: Outcome) {
            self.occurrence = occurrence
            self.zone = zone
            self.instant = instant
            self.outcome = outcome
        }
    }

    /// Whether a firing's push goes out.
    public enum Outcome: Sendable, Equatable {
        case send
        /// Found more than the grace period late: recorded, not sent.
        case missed(reason: String)
        /// Its push was refused when it fired (``SchedulePlan/refuse(_:reason:)``).
        case refused(reason: String)

        /// Why the push does not go out, in words; `nil` when it does.
        public var reason: String? {
            switch self {
            case .send: nil
            case .missed(let reason), .refused(let reason): reason
            }
        }
    }

    /// The occurrences due now, oldest first, each in the zones it is due in.
    public private(set) var firings: [Firing]
    /// Where the schedule stands after them.
    public private(set) var next: ScheduleState
    /// Why the schedule cannot be planned at all (``stopped(_:)``).
    private var unplannable: String?

    /// The last thing that went wrong (a firing missed or refused, or why the schedule cannot be planned), in words.
    public var error: String? { self.firings.last(where: { $0.outcome.reason != nil })?.outcome.reason ?? self.unplannable }

    /// The plan of `due` at `now`. For a local-time schedule, `zones` are the zones it fires in (in the order its
    /// firings take), `instants` when each zone's clocks read each of ``DueSchedule/occurrences(at:)``, and `fired`
    /// the zones that already fired one; a UTC schedule needs none of them.
    public init(
        _ due: DueSchedule, at now: Date, zones: [String] = [], instants: [ZonedOccurrence: Date] = [:], fired: Set<ZonedOccurrence> = []
    ) {
        let local = due.schedule.time.isLocal
        var firings: [Firing] = []
        var upcoming: Date?
        var incomplete: Date?
        let (occurrences, following) = due.inFlight(at: now)
        for occurrence in occurrences {
            let reached: [(zone: String, instant: Date)] =
                local
                ? zones.compactMap { zone -> (zone: String, instant: Date)? in
                    let key = ZonedOccurrence(occurrence: occurrence, zone: zone)
                    guard !fired.contains(key), let instant = instants[key] else { return nil }
                    return (zone, instant)
                }
                : [("", occurrence)]
            for (zone, instant) in reached {
                guard instant <= now else {
                    upcoming = min(upcoming ?? instant, instant)
                    continue
                }
                let outcome: Outcome =
                    now.timeIntervalSince(instant) > due.grace
                    ? .missed(reason: "missed: due at \(AirshipDate.format(instant)) UTC, more than the app's grace period of \(Int(due.grace)) s ago")
                    : .send
                firings.append(Firing(occurrence: occurrence, zone: zone, instant: instant, outcome: outcome))
            }
            if incomplete == nil, occurrence.addingTimeInterval(due.latestOffset) > now { incomplete = occurrence }
        }
        if let following {
            let first = following.addingTimeInterval(-due.earliestOffset)
            upcoming = min(upcoming ?? first, first)
        }
        self.firings = firings
        self.next = ScheduleState(nextOccurrence: upcoming == nil ? nil : incomplete ?? following, fireAt: upcoming)
    }

    /// A schedule that cannot be planned (it cannot be read): nothing fires, it never fires again, and `error` says why.
    public static func stopped(_ error: String?) -> SchedulePlan {
        SchedulePlan(next: ScheduleState(nextOccurrence: nil, fireAt: nil), unplannable: error)
    }

    private init(next: ScheduleState, unplannable: String?) {
        self.firings = []
        self.next = next
        self.unplannable = unplannable
    }

    /// Records that the push of firing `index` was refused when it fired; the schedule's error is then the last
    /// reason of its firings.
    public mutating func refuse(_ index: Int, reason: String) {
        self.firings[index].outcome = .refused(reason: reason)
    }
}

/// A schedule a worker found due: what its plan starts from.
public struct DueSchedule: Sendable {
    public var schedule: ScheduledPush
    /// Its next occurrence not fired everywhere (wall-clock).
    public var nextOccurrence: Date
    /// How late an occurrence may still be sent (the app's grace period).
    public var grace: TimeInterval

    public init(schedule: ScheduledPush, nextOccurrence: Date, grace: TimeInterval) {
        self.schedule = schedule
        self.nextOccurrence = nextOccurrence
        self.grace = grace
    }

    /// How long after its time (in UTC) an occurrence has passed in every zone.
    var latestOffset: TimeInterval { self.schedule.time.isLocal ? ScheduledPush.latestOffset : 0 }
    /// How long before its time (in UTC) an occurrence is first reached in some zone.
    var earliestOffset: TimeInterval { self.schedule.time.isLocal ? ScheduledPush.earliestOffset : 0 }

    /// The occurrences some zone's clocks may have reached by `now`, oldest first: of those every zone passed, only the
    /// latest. A local-time schedule's plan needs their instants in each zone.
    public func occurrences(at now: Date) -> [Date] {
        self.inFlight(at: now).occurrences
    }

    /// Those occurrences, and the one after them (`nil` when none remains).
    func inFlight(at now: Date) -> (occurrences: [Date], following: Date?) {
        var occurrence = self.nextOccurrence
        while let later = self.schedule.occurrence(after: occurrence), later.addingTimeInterval(self.latestOffset) <= now { occurrence = later }
        var occurrences: [Date] = []
        var current: Date? = occurrence
        while let time = current, time.addingTimeInterval(-self.earliestOffset) <= now {
            occurrences.append(time)
            current = self.schedule.occurrence(after: time)
        }
        return (occurrences, current)
    }
}

/// An occurrence of a local-time schedule (wall-clock) in one zone: the key of the instant the zone's clocks read it.
public struct ZonedOccurrence: Hashable, Sendable {
    public var occurrence: Date
    public var zone: String

    public init(occurrence: Date, zone: String) {
        self.occurrence = occurrence
        self.zone = zone
    }
}

/// Where a schedule stands: its next occurrence not fired everywhere (wall-clock) and when a worker next looks at it.
public struct ScheduleState: Sendable, Equatable {
    /// `nil` when no occurrence remains.
    public var nextOccurrence: Date?
    /// `nil` when nothing remains to fire, or the schedule is paused.
    public var fireAt: Date?

    public init(nextOccurrence: Date?, fireAt: Date?) {
        self.nextOccurrence = nextOccurrence
        self.fireAt = fireAt
    }

    /// Where `schedule` stands when created, replaced or resumed at `now`: its first occurrence from now on, looked at
    /// when it comes for UTC, or when the first zone reaches it for local time.
    public init(first schedule: ScheduledPush, now: Date) {
        let earliest = schedule.time.isLocal ? now.addingTimeInterval(-ScheduledPush.latestOffset) : now
        let next: Date? =
            if schedule.recurrence == nil {
                schedule.time.wallClock >= earliest ? schedule.time.wallClock : nil
            } else {
                schedule.recurrence?.occurrence(from: schedule.time.wallClock, atOrAfter: earliest)
            }
        guard let next, schedule.recurrence?.paused != true else {
            self.init(nextOccurrence: next, fireAt: nil)
            return
        }
        self.init(nextOccurrence: next, fireAt: schedule.time.isLocal ? next.addingTimeInterval(-ScheduledPush.earliestOffset) : next)
    }
}
