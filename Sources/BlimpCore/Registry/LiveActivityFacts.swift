import Foundation

/// What Blimp has on record of one activity of a channel under a name: the SDK's tracked row
/// (`live_activities`), an activity awaiting its token (`awaiting_activities`), and the stale date of the last
/// update APNs accepted for it. ``standing(at:)`` derives its state from these and the time alone.
public struct LiveActivityFacts: Sendable, Equatable {
    /// The activity as the SDK reported it, last writer wins.
    public struct Tracked: Sendable, Equatable {
        /// The row's state: `active`; `ended` by a push; `removed` by the device.
        public enum Record: String, Sendable, Codable {
            case active, ended, removed
        }

        public var record: Record
        public var startedAt: Date
        /// When an `end` push ended it (kept when the device removes it afterwards).
        public var endedAt: Date?
        /// The dismissal date the `end` push carried, or 4 hours after it.
        public var dismissAt: Date?
        /// When the row last changed: for a removed activity, when the device reported it gone.
        public var updatedAt: Date

        public init(record: Record, startedAt: Date, endedAt: Date? = nil, dismissAt: Date? = nil, updatedAt: Date) {
            self.record = record
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.dismissAt = dismissAt
            self.updatedAt = updatedAt
        }
    }

    /// A start Blimp sent by push-to-start whose update token has not come.
    public struct Awaiting: Sendable, Equatable {
        /// When APNs accepted the start.
        public var sentAt: Date
        /// Whether the janitor marked it expired.
        public var expired: Bool

        public init(sentAt: Date, expired: Bool = false) {
            self.sentAt = sentAt
            self.expired = expired
        }
    }

    public var tracked: Tracked?
    public var awaiting: Awaiting?
    /// `aps.stale-date` of the newest push of the name APNs accepted for this activity, if it carried one.
    public var staleDate: Date?

    public init(tracked: Tracked? = nil, awaiting: Awaiting? = nil, staleDate: Date? = nil) {
        self.tracked = tracked
        self.awaiting = awaiting
        self.staleDate = staleDate
    }

    /// The activity's state at `now`, or `nil` when nothing is on record. When both a tracked row and an awaiting
    /// start exist, the later start is the activity (the tracked row on a tie): a device that reports a token for
    /// an activity started after the start was sent releases the awaiting one, so a tracked row older than the start
    /// is an earlier activity of the name.
    public func standing(at now: Date) -> LiveActivityStanding? {
        switch (self.tracked, self.awaiting) {
        case (let tracked?, let awaiting?) where awaiting.sentAt > tracked.startedAt:
            Self.standing(awaiting, at: now)
        case (let tracked?, _):
            self.standing(tracked, at: now)
        case (nil, let awaiting?):
            Self.standing(awaiting, at: now)
        case (nil, nil):
            nil
        }
    }

    private static func standing(_ awaiting: Awaiting, at now: Date) -> LiveActivityStanding {
        let updatable = !awaiting.expired && LiveActivityLifetime.isUpdatable(startedAt: awaiting.sentAt, now: now)
        return LiveActivityStanding(state: updatable ? .awaitingToken : .expired, startedAt: awaiting.sentAt, awaitsToken: true)
    }

    private func standing(_ tracked: Tracked, at now: Date) -> LiveActivityStanding {
        var standing = LiveActivityStanding(state: .active, startedAt: tracked.startedAt)
        switch tracked.record {
        case .active:
            if !LiveActivityLifetime.isUpdatable(startedAt: tracked.startedAt, now: now) {
                standing.state = .expired
            } else if let staleDate = self.staleDate, now > staleDate {
                standing.state = .stale
            }
            return standing
        case .ended, .removed:
            // An end by push is kept when the device then reports the activity gone; the device reports no dismissal,
            // so an activity it ended counts as dismissed when iOS would have dismissed it at the latest.
            let endedAt = tracked.endedAt ?? tracked.updatedAt
            let dismissAt = tracked.dismissAt ?? endedAt.addingTimeInterval(LiveActivityLifetime.dismissedAfterEnd)
            standing.endedBy = tracked.endedAt == nil && tracked.record == .removed ? .device : .push
            standing.endedAt = endedAt
            standing.dismissAt = dismissAt
            standing.state = now > dismissAt ? .dismissed : .ended
            return standing
        }
    }
}

/// An activity's state at one time, with the dates it follows from.
public struct LiveActivityStanding: Sendable, Equatable {
    public var state: LiveActivityState
    /// When the activity started: the device's start for a tracked activity, when APNs accepted the start for one
    /// awaiting its token.
    public var startedAt: Date
    /// Whether the activity is a start awaiting its token (or that expired awaiting it), not the tracked row: it
    /// has no token and no activity id.
    public var awaitsToken: Bool
    public var endedBy: LiveActivityEnd?
    public var endedAt: Date?
    public var dismissAt: Date?

    public init(
        state: LiveActivityState, startedAt: Date, awaitsToken: Bool = false, endedBy: LiveActivityEnd? = nil,
        endedAt: Date? = nil, dismissAt: Date? = nil
    ) {
        self.state = state
        self.startedAt = startedAt
        self.awaitsToken = awaitsToken
        self.endedBy = endedBy
        self.endedAt = endedAt
        self.dismissAt = dismissAt
    }
}
