import Foundation

/// Where one Live Activity of a channel stands, derived from what Blimp has on record (``LiveActivityFacts``) and
/// the time: the closed set the API, the console and their tests share.
public enum LiveActivityState: String, Sendable, Codable, CaseIterable {
    /// Blimp sent its start by push-to-start and waits for the device to report the update token.
    case awaitingToken = "awaiting_token"
    /// Updatable: it has an update token and is within its 8 hours.
    case active
    /// Active, but past the stale date of the last update APNs accepted for it (`aps.stale-date`; see
    /// docs/references.md#live-activity-payloads).
    case stale
    /// Ended by an `end` push or on the device, and still on the Lock Screen.
    case ended
    /// Ended and past its dismissal date: gone from the Lock Screen.
    case dismissed
    /// Past its 8 hours without an end (iOS ended it), or a start whose token never came within them.
    case expired
}

/// What ended an activity.
public enum LiveActivityEnd: String, Sendable, Codable {
    /// An `end` push APNs accepted for it.
    case push
    /// The device reported the activity gone (the SDK's `remove` of its update token).
    case device
}
