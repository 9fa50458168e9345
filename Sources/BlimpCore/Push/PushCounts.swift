/// What the workers counted for one push, kept as JSON in `pushes.counts` and shown in its report.
public struct PushCounts: Sendable, Equatable {
    /// Tokens the audience and name resolved to.
    public var targets = 0
    /// Accepted by APNs.
    public var sent = 0
    /// Not delivered, by why: APNs's reason, no answer (`no_response`), or an error status without a reason.
    public var failed: [DeliveryFailure: Int] = [:]
    /// Sent at priority 5 because the token's priority-10 budget was spent.
    public var downgradedPriority = 0
    /// Updates to activities that had ended.
    public var skippedEnded = 0
    /// Starts for a name already active on the channel, or beyond the device's push-to-start budget.
    public var skippedAlreadyActive = 0
    public var skippedStartBudget = 0
    /// Starts for a name whose activity Blimp started on the channel and that still awaits its token.
    public var skippedAwaitingToken = 0
    /// Updates and ends held for activities awaiting their token (``AwaitingToken``); each goes out when the token
    /// comes, or expires with the activity.
    public var heldAwaitingToken = 0
    /// Held copies sent once their activity's token came, after the push itself had finished (not from the parts).
    public var deliveredAfterToken = 0
    /// Activities that never reported a token: on a start, those it started; on an update or end, its held copies.
    /// Not from the parts either.
    public var expiredAwaitingToken = 0
    /// Tokens a newer push of the name reached instead.
    public var superseded = 0
    /// Tokens APNs reported invalid, removed.
    public var tokensPruned = 0

    public init() {}

    /// The counts in stored or reported JSON; absent ones are zero.
    public init(_ json: RawJSON) {
        func count(_ key: String) -> Int { if case .number(let n)? = json[key] { Int(n) ?? 0 } else { 0 } }
        self.targets = count("targets")
        self.sent = count("sent")
        self.downgradedPriority = count("downgraded_priority")
        self.skippedEnded = count("skipped_ended")
        self.skippedAlreadyActive = count("skipped_already_active")
        self.skippedStartBudget = count("skipped_start_budget")
        self.skippedAwaitingToken = count("skipped_awaiting_token")
        self.heldAwaitingToken = count("held_awaiting_token")
        self.deliveredAfterToken = count("delivered_after_token")
        self.expiredAwaitingToken = count("expired_awaiting_token")
        self.superseded = count("superseded")
        self.tokensPruned = count("tokens_pruned")
        if case .object(let reasons)? = json["failed"] {
            for reason in reasons { if case .number(let n) = reason.value { self.failed[DeliveryFailure(key: reason.key)] = Int(n) ?? 0 } }
        }
    }

    /// Counts a target the worker did not send, under its reason (an older timestamp is superseded).
    public mutating func count(skipped reason: SkipReason) {
        switch reason {
        case .alreadyActive: self.skippedAlreadyActive += 1
        case .awaitingToken: self.skippedAwaitingToken += 1
        case .startBudget: self.skippedStartBudget += 1
        case .olderTimestamp: self.superseded += 1
        }
    }

    /// The counts of two parts of one fan-out together.
    public static func + (lhs: PushCounts, rhs: PushCounts) -> PushCounts {
        var sum = lhs
        sum.targets += rhs.targets
        sum.sent += rhs.sent
        sum.failed.merge(rhs.failed, uniquingKeysWith: +)
        sum.downgradedPriority += rhs.downgradedPriority
        sum.skippedEnded += rhs.skippedEnded
        sum.skippedAlreadyActive += rhs.skippedAlreadyActive
        sum.skippedStartBudget += rhs.skippedStartBudget
        sum.skippedAwaitingToken += rhs.skippedAwaitingToken
        sum.heldAwaitingToken += rhs.heldAwaitingToken
        sum.deliveredAfterToken += rhs.deliveredAfterToken
        sum.expiredAwaitingToken += rhs.expiredAwaitingToken
        sum.superseded += rhs.superseded
        sum.tokensPruned += rhs.tokensPruned
        return sum
    }

    public var json: RawJSON {
        .object([
            .init("targets", .integer(Int64(self.targets))),
            .init("sent", .integer(Int64(self.sent))),
            .init("failed", .object(self.failed.sorted { $0.key < $1.key }.map { .init($0.key.key, .integer(Int64($0.value))) })),
            .init("downgraded_priority", .integer(Int64(self.downgradedPriority))),
            .init("skipped_ended", .integer(Int64(self.skippedEnded))),
            .init("skipped_already_active", .integer(Int64(self.skippedAlreadyActive))),
            .init("skipped_start_budget", .integer(Int64(self.skippedStartBudget))),
            .init("skipped_awaiting_token", .integer(Int64(self.skippedAwaitingToken))),
            .init("held_awaiting_token", .integer(Int64(self.heldAwaitingToken))),
            .init("delivered_after_token", .integer(Int64(self.deliveredAfterToken))),
            .init("expired_awaiting_token", .integer(Int64(self.expiredAwaitingToken))),
            .init("superseded", .integer(Int64(self.superseded))),
            .init("tokens_pruned", .integer(Int64(self.tokensPruned))),
        ])
    }
}
