/// Whether a simulated device token is still valid for its topic.
public enum DeviceTokenState: String, Sendable, Codable {
    /// Pushes are accepted. Every token the simulator has not been told about is active.
    case active
    /// 410 `Unregistered`, with the time the token was unregistered (reference: apns-live-activities.md §1.5).
    case unregistered
    /// 410 `ExpiredToken`, with the time it expired, as aged Live Activity tokens get (reference §1.5, §3.2).
    case expired
    /// 400 `BadDeviceToken`, as for a token from the other environment (reference §1.5).
    case bad
}
