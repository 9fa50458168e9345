/// Whether a simulated device token is still valid for its topic.
public enum DeviceTokenState: String, Sendable, Codable {
    /// Pushes are accepted. Every token the simulator has not been told about is active.
    case active
    /// 410 `Unregistered`, with the time the token was unregistered (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    case unregistered
    /// 410 `ExpiredToken`, with the time it expired, as aged Live Activity tokens get (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns; https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
    case expired
    /// 400 `BadDeviceToken`, as for a token from the other environment (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    case bad
}
