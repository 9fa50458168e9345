import BlimpCore
import BlimpStore
import Metrics

/// What workers count (swift-metrics; docs/operations.md lists every metric).
enum DispatchMetrics {
    /// Live Activity requests sent at priority 5 instead of 10: the device's priority-10 budget was spent.
    static let priorityDowngrades = Counter(label: "blimp_priority_downgrades_total")
    /// Starts not sent: the device spent its push-to-start budget.
    static let budgetSkips = Counter(label: "blimp_budget_skips_total")
    /// Tokens APNs answered are no longer valid, removed from their channels.
    static let tokensPruned = Counter(label: "blimp_tokens_pruned_total")
    /// Times a worker started listening for new pushes again: its connection failed, or its heartbeat found the
    /// server silent or a standby.
    static let listenerReconnects = Counter(label: "blimp_listener_reconnects_total")

    /// Counts one batch's downgrades, budget skips and pruned tokens: what `counts` gained since `before`.
    static func count(from before: PushCounts, to counts: PushCounts) {
        for (counter, added) in [
            (Self.priorityDowngrades, counts.downgradedPriority - before.downgradedPriority),
            (Self.budgetSkips, counts.skippedStartBudget - before.skippedStartBudget),
            (Self.tokensPruned, counts.tokensPruned - before.tokensPruned),
        ] where added > 0 {
            counter.increment(by: Int64(added))
        }
    }
}
