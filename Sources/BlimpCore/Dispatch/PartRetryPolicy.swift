/// How often a part of a push whose delivery keeps failing (the database, the app's key, anything but APNs's
/// per-token answers, which ``DeliveryPolicy`` handles) is tried again before its push fails, and how long it waits
/// in between: 10 s, 20 s, 40 s, 80 s, then the push fails with the last reason. A permanent reason fails it at once.
public struct PartRetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maximumAttempts = 5
    public var firstDelay: Duration = .seconds(10)
    public var longestDelay: Duration = .seconds(300)

    public init() {}

    /// The wait before attempt `attempts + 1`, after `attempts` failed ones; `nil` when the push should fail.
    public func delay(afterFailedAttempts attempts: Int) -> Duration? {
        guard attempts < self.maximumAttempts else { return nil }
        let doubled = self.firstDelay * (1 << min(max(attempts - 1, 0), 20))
        return min(doubled, self.longestDelay)
    }
}
