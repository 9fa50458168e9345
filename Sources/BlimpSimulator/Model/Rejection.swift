import BlimpCore

/// A request the simulator refuses, with the reason APNs would give.
struct Rejection: Error {
    let reason: APNsReason
    /// The status APNs answers the reason with.
    let status: Int

    /// - Parameter status: the status, when it is not the one Apple's device-push table gives the reason
    ///   (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns); otherwise that one, or 400 for the broadcast reasons (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns) and
    ///   the simulator's own ``APNsReason/badPayload``.
    init(_ reason: APNsReason, status: Int? = nil) {
        self.reason = reason
        self.status = status ?? APNsReason.documented.first { $0.reason == reason }?.status ?? 400
    }
}

extension APNsReason {
    /// The simulator's answer to a body that is not a JSON object with an `aps` object, or a Live Activity payload
    /// missing what ActivityKit needs. Apple's table has no reason for these (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns; https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications): APNs
    /// accepts some of them and the device drops them, but a simulator that says so finds the bug sooner.
    public static let badPayload = Self(rawValue: "BadPayload")
}
