import BlimpCore
import Metrics

/// What happens to pushes, counted where their state changes, once the change is committed (swift-metrics;
/// docs/operations.md lists every metric).
enum PushMetrics {
    /// Pushes queued (an idempotent replay queues nothing and is not counted).
    static let accepted = Counter(label: "blimp_pushes_accepted_total")

    /// Counts a push that reached its final state: `done`, `superseded`, `failed` or `cancelled`.
    static func finished(_ state: PushState) {
        Counter(label: "blimp_pushes_finished_total", dimensions: [("state", state.rawValue)]).increment()
    }
}
