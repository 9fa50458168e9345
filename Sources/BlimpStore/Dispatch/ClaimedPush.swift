import BlimpCore
import Foundation

/// One part of a push's fan-out, held by a worker under a lease: what to send, to whom, and how far the part has
/// come.
public struct ClaimedPush: Sendable {
    public enum Kind: Sendable, Equatable {
        /// `start`, `update` or `end` of the activities tracked under `name`.
        case liveActivity(LiveActivityNotification.Event, name: String, attributesType: String?)
        case alert
    }

    public let appID: Int64
    public let pushID: UUID
    public let kind: Kind
    public let audience: Audience
    /// The APNs body, the same for every token.
    public let body: [UInt8]
    /// For an end: when the ended activities leave the Lock Screen, if the push names it.
    public let dismissalDate: Date?
    public let pushType: APNsPushType
    public let priority: Int
    public let collapseID: String?
    public let expiresAt: Date?
    /// It lights the screen (an alert, a start, an end, an update with an alert): it gets priority 10 before plain
    /// updates when a token's budget runs low.
    public let isAlerting: Bool
    /// Which part of the fan-out this is: 0, over every channel, until its first full batch splits off the rest.
    public let part: Int16
    /// The last channel id of the part's range.
    public var through: UUID
    /// The last channel the part finished; targets after it, through `through`, remain.
    public var cursor: UUID
    /// The part's own counts; the push's are the sum of its parts'.
    public var counts: PushCounts

    /// Whether the part is the whole push, never split: it is the push's only part.
    public var isWhole: Bool { self.part == 0 && self.through == ChannelIDRange.all.through }

    /// Whether the part is whole and untouched: the first batch of such a part may split the rest of its range.
    public var mayBeSplit: Bool { self.isWhole && self.cursor == ChannelIDRange.all.after }
}

/// One token a push goes to.
public struct DispatchTarget: Sendable, Equatable {
    public var channelID: UUID
    public var token: String
    /// The channel allows frequent Live Activity updates (a larger priority-10 budget).
    public var frequentPushes: Bool
    /// Priority-10 sends to this token in the last hour.
    public var recentPriority10: Int
    /// For a start: the name is already active on this channel; for an alert or an update: unused.
    public var alreadyActive: Bool
    /// For a start: push-to-start sends to this channel in the last hour.
    public var recentStarts: Int
}
