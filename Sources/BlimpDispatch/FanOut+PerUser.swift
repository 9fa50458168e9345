import BlimpCore
import BlimpStore
import Logging
import Tracing

extension FanOut {
    /// Delivers per-user pushes of the app together (``ClaimedPush/isPerUser``): held where their activities await a
    /// token, resolved in one statement, sent at once, and recorded and finished in one transaction. An update that a
    /// newer one of its audience waits behind is superseded unsent, and one whose activity was already sent a newer
    /// timestamp is skipped there, as in a fan-out. Returns the pushes with more targets than a batch takes (a named
    /// user of many channels), untouched, for fan-outs of their own.
    func run(perUser claimed: [ClaimedPush]) async throws -> [ClaimedPush] {
        var pushes = claimed
        for index in pushes.indices {
            pushes[index].counts.heldAwaitingToken += try await self.store.hold(pushes[index], now: self.now())
        }
        let resolved = try await self.store.targets(ofPerUser: pushes, limit: self.configuration.batchSize, now: self.now())
        var overflowing: [ClaimedPush] = []
        var sent: [Int] = []
        var superseded: [Int] = []
        var targets: [(target: DispatchTarget, push: Int)] = []
        for (index, resolution) in resolved.enumerated() {
            if resolution.overflows {
                overflowing.append(claimed[index])
            } else if let reason = resolution.unreadable {
                _ = try await self.store.partFailed(
                    appID: pushes[index].appID, pushID: pushes[index].pushID, part: pushes[index].part, reason: reason, permanent: true,
                    worker: self.worker, policy: self.configuration.partRetries)
                self.logger.error("push failed", metadata: ["push.id": "\(pushes[index].pushID.lowercaseString)", "error": "\(reason)"])
            } else if resolution.superseded {
                pushes[index].counts.superseded = resolution.targets.count
                superseded.append(index)
            } else {
                pushes[index].counts.skippedEnded = resolution.ended
                targets += resolution.targets.map { ($0, index) }
                sent.append(index)
            }
        }
        let outcomes = try await withSpan("APNs batch", ofKind: .client) { span in
            span.attributes["blimp.targets"] = targets.count
            return try await self.send(targets, of: &pushes)
        }
        let deliveries =
            sent.map { DispatchStore.PerUserDelivery(push: pushes[$0], outcomes: outcomes[$0], state: .done) }
            + superseded.map { DispatchStore.PerUserDelivery(push: pushes[$0], outcomes: [], state: .superseded) }
        try await self.store.record(perUser: deliveries, worker: self.worker, now: self.now())
        return overflowing
    }
}
