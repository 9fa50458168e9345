import Foundation

/// How long a Live Activity lives (docs/references.md#live-activity-lifetime): it can be updated for
/// 8 hours after it starts, then iOS shows it for at most 4 hours more and removes it.
public enum LiveActivityLifetime {
    /// After this, the system has ended the activity: no further update reaches it.
    public static let updatable: TimeInterval = 8 * 3600
    /// After this, the activity is gone from the device, and Blimp forgets it.
    public static let kept: TimeInterval = 12 * 3600
    /// How long an ended activity stays on the Lock Screen when its end names no dismissal date.
    public static let dismissedAfterEnd: TimeInterval = 4 * 3600

    /// Whether an activity that started at `startedAt` still accepts updates at `now`.
    public static func isUpdatable(startedAt: Date, now: Date) -> Bool {
        now.timeIntervalSince(startedAt) < Self.updatable
    }
}
