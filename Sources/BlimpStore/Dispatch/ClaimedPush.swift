import BlimpCore
import Foundation

/// A push a worker holds under a lease: what to send, to whom, and how far its fan-out has come.
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
    /// The last channel the fan-out finished; targets after it remain.
    public var cursor: UUID
    public var counts: PushCounts

    /// The channel id every fan-out starts after.
    public static let start = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
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
