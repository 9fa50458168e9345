import Foundation

/// One push the simulator accepted (200) for a token, and what the simulated device did with it.
public struct SimulatedDelivery: Sendable, Codable, Equatable {
    /// What the device did with a push APNs accepted.
    public enum Outcome: String, Sendable, Codable {
        /// Shown (or, for a push that shows nothing, handed to the app).
        case displayed
        /// Dropped because the token's priority-10 budget for the hour was spent (see
        /// docs/references.md#priority-budget).
        case throttled
        /// A Live Activity update whose `timestamp` was older than the last one applied (docs/references.md#live-activity-timestamps).
        case ignoredStale
        /// A Live Activity push that arrived after the activity ended (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
        case ignoredEnded
        /// A start whose `input-push-channel` names no channel of its bundle id: APNs accepts it and the activity
        /// fails to start (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
        case failedToStart
    }

    /// `apns-id`, lower case.
    public var apnsID: String
    /// `apns-push-type` (`alert` when the request had none).
    public var pushType: SimulatedPushType
    /// `apns-topic`.
    public var topic: String
    /// `apns-priority` (10, or 5 for background, when the request had none).
    public var priority: Int
    /// `apns-expiration`, epoch seconds.
    public var expiration: Int64?
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// The payload as sent.
    public var payload: String
    /// When the simulator received it.
    public var arrivedAt: Date
    /// What the device did with it.
    public var outcome: Outcome
    /// The broadcast channel it was published to; `nil` for a push to the device's token.
    public var channelID: String? = nil
}
