/// Why a worker did not send a push to one target it read: a `SEND_SKIPPED` event's `reason`.
public enum SkipReason: String, Sendable, CaseIterable {
    /// A start to a channel where the name is already active.
    case alreadyActive = "already_active"
    /// A start to a channel where an earlier start of the name awaits its token.
    case awaitingToken = "awaiting_token"
    /// A start to a device that spent its push-to-start budget.
    case startBudget = "start_budget"
    /// An update older than one the activity was already sent: iOS would ignore it.
    case olderTimestamp = "older_timestamp"
}
