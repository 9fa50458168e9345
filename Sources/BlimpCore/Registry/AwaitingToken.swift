import Foundation

/// An activity Blimp started by push-to-start, until the device reports its update token: the start asks for one
/// (`input-push-token`), and the SDK reports it with `set update_token` under the name the app tracks the activity by
/// (``LiveActivityNotification/nameAttribute``). Updates and ends of the name meanwhile are held, the newest kept, and
/// go out to the token when it comes; the activity expires awaiting after ``LiveActivityLifetime/updatable``.
public enum AwaitingToken {
    /// How far a device's clock may run behind Blimp's. A reported token releases an awaiting activity only when the
    /// activity started (`start_ts_ms`, the device's clock) no earlier than the start was sent less this, so that a
    /// late report from an older activity of the name never releases a held push to a dead token.
    public static let allowedClockSkew: TimeInterval = 5 * 60
}
