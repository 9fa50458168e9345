import BlimpAPNs
import BlimpCore
import BlimpStore
import Foundation
import Logging
import ServiceLifecycle
import Tracing

/// Delivers one claimed part of a push: its targets in keyset batches (the next batch read while the current one is
/// sent), each token's request through the APNs client with retries, and after each batch one checkpoint of
/// outcomes, counts and cursor. A whole push's first full batch splits the rest of its range into parts that other
/// claim loops take up. An update stops, superseded, as soon as a newer update or end of its name to the same audience
/// is waiting, and skips each activity already sent a newer timestamp. An update
/// or end of a name backed by a live activity channel is first published once to the channel
/// (``BroadcastPublication``); the tokens of the name's activities that track one are sent to as usual.
struct FanOut {
    let store: DispatchStore
    let apns: APNsClient
    /// Publishing to live activity channels and deleting them; `nil`: a push through one fails.
    let broadcast: (any APNsBroadcastChannels & APNsBroadcastPublishing)?
    let liveActivityChannels: LiveActivityChannelStore
    let delivery: DeliveryTarget
    let configuration: WorkerConfiguration
    let worker: String
    /// Traces every APNs attempt per token (push, channel, attempt, answer, what follows), so that a token's
    /// history can be read back.
    let logger: Logger
    let now: @Sendable () -> Date

    /// The app's side of delivery: its topic, key, environment and budget.
    struct DeliveryTarget: Sendable {
        /// The app's public key, for logs.
        var appKey: String
        var bundleID: String
        var key: APNsSigningKey
        var environment: APNsEnvironment
        var budget: PriorityBudget
    }

    /// How the fan-out ended.
    enum Ending {
        case done, superseded
        /// The lease was lost (another worker took the push over) or the worker is shutting down.
        case abandoned
    }

    func run(_ claimed: ClaimedPush) async throws -> Ending {
        if let channelID = claimed.pendingBroadcast {
            guard let broadcast = self.broadcast else { throw DispatchFailure.noBroadcastClient }
            let publication = BroadcastPublication(
                store: self.store, channels: self.liveActivityChannels, apns: broadcast, delivery: self.delivery,
                policy: self.configuration.delivery, worker: self.worker, logger: self.logger, now: self.now)
            guard try await publication.publish(claimed, to: channelID, expiration: self.expiration(of: claimed)) else { return .abandoned }
        }
        var push = claimed
        push.mayBeStale = try await self.store.mayBeStale(push)
        let limit = self.configuration.batchSize
        // Held first, then targets read: a token reported before the hold is among them, one after releases the push.
        push.counts.heldAwaitingToken += try await self.store.hold(push, now: self.now())
        var next = try await self.store.targets(of: push, limit: limit, now: self.now())
        while !next.isEmpty {
            if try await self.store.isSuperseded(push) {
                push.counts.superseded = try await self.store.remainingTargets(of: push, now: self.now())
                try await self.store.finish(push, state: .superseded, worker: self.worker, now: self.now())
                return .superseded
            }
            let batch = next
            var ahead = push
            ahead.cursor = batch.last!.channelID
            // A whole push with more to come keeps the first of its remaining range and hands on the others.
            var split: [ChannelIDRange] = []
            if push.mayBeSplit, batch.count == limit {
                split = ChannelIDRange(after: ahead.cursor, through: ahead.through).split(into: self.configuration.fanOutParts)
                ahead.through = split.removeFirst().through
            }
            let store = self.store, now = self.now(), reading = ahead
            async let following = store.targets(of: reading, limit: limit, now: now)
            let outcomes = try await withSpan("APNs batch", ofKind: .client) { span in
                let outcomes = try await self.send(batch, of: &push)
                span.attributes["blimp.targets"] = batch.count
                span.attributes["blimp.sent"] = outcomes.count { $0.status == 200 }
                return outcomes
            }
            let refusal = outcomes.lazy.compactMap(\.reason).first(where: APNsReason.refusingTheApp.contains)
            // APNs refusing the app fails the push, as it would every token: no parts are handed on to send more.
            if refusal != nil { (ahead.through, split) = (push.through, []) }
            (push.cursor, push.through) = (ahead.cursor, ahead.through)
            guard try await self.store.record(
                outcomes, of: push, split: split, worker: self.worker, now: self.now(), lease: self.configuration.lease)
            else {
                _ = try? await following
                return .abandoned
            }
            // Recorded first, so the report shows what APNs answered; then the push fails.
            if let refusal {
                _ = try? await following
                throw DispatchFailure.refused(refusal)
            }
            next = try await following
            // A shutdown lets the batch in flight finish and be recorded, then gives the part back.
            if Task.isShuttingDownGracefully || Task.isCancelled { return .abandoned }
        }
        try await self.store.finish(push, state: .done, worker: self.worker, now: self.now())
        return .done
    }

    /// Sends a held push that its activities' tokens released (``DispatchStore/ReleasedPush``) to those tokens, at the
    /// priority each token's budget allows now, and records the answers.
    func run(_ released: DispatchStore.ReleasedPush) async throws {
        var push = released.push
        let outcomes = try await self.send(released.targets, of: &push)
        try await self.store.recordReleased(outcomes, of: released, worker: self.worker, now: self.now())
    }

    /// Sends one batch of the push's targets and counts it in the push's counts.
    private func send(_ batch: [DispatchTarget], of push: inout ClaimedPush) async throws -> [DispatchStore.Outcome] {
        var pushes = [push]
        defer { push = pushes[0] }
        return try await self.send(batch.map { ($0, 0) }, of: &pushes)[0]
    }

    /// Sends the targets of `pushes` (each tagged with its push's index), all at once (the client queues what its
    /// connections cannot take yet), and counts each in its push's counts. Returns each push's outcomes.
    ///
    /// - Throws: `CancellationError` when the fan-out is cancelled with tokens still to retry (see
    ///   ``deliver(_:of:)``).
    func send(_ targets: [(target: DispatchTarget, push: Int)], of pushes: inout [ClaimedPush]) async throws -> [[DispatchStore.Outcome]] {
        let before = pushes.map(\.counts)
        defer { for (counts, push) in zip(before, pushes) { DispatchMetrics.count(from: counts, to: push.counts) } }
        var sends: [Send] = []
        var outcomes = [[DispatchStore.Outcome]](repeating: [], count: pushes.count)
        for (target, index) in targets {
            pushes[index].counts.targets += 1
            switch self.plan(target, of: pushes[index]) {
            case .send(let request, let target):
                sends.append(Send(request: request, target: target, push: index))
                if request.priority < pushes[index].priority { pushes[index].counts.downgradedPriority += 1 }
            case .skip(let reason):
                pushes[index].counts.count(skipped: reason)
                outcomes[index].append(.skipped(target, reason, priority: pushes[index].priority))
            }
        }
        for (send, outcome) in zip(sends, try await self.deliver(sends, of: pushes)) {
            if outcome.status == 200 {
                pushes[send.push].counts.sent += 1
            } else {
                pushes[send.push].counts.failed[DeliveryFailure(status: outcome.status, reason: outcome.reason), default: 0] += 1
            }
            if outcome.deadSince != nil { pushes[send.push].counts.tokensPruned += 1 }
            outcomes[send.push].append(outcome)
        }
        return outcomes
    }

    /// One request for a target of a push, that push's index among those sent together.
    private struct Send {
        var request: APNsRequest
        var target: DispatchTarget
        var push: Int
    }

    private enum Plan {
        case send(APNsRequest, DispatchTarget)
        case skip(SkipReason)
    }

    /// What to do for one target: a start skips a channel where the name is already active or awaits its token, or
    /// whose device spent its push-to-start budget; an update skips an activity already sent a newer timestamp (iOS
    /// would ignore it; an end goes whatever its timestamp, as devices apply it); a Live Activity push over the token's
    /// priority-10 budget goes at priority 5.
    private func plan(_ target: DispatchTarget, of push: ClaimedPush) -> Plan {
        var priority = push.priority
        if case .liveActivity(let event, _, _) = push.kind {
            if event == .start {
                if target.alreadyActive { return .skip(.alreadyActive) }
                if target.awaitingToken { return .skip(.awaitingToken) }
                if !self.delivery.budget.allowsStart(sentInLastHour: target.recentStarts) { return .skip(.startBudget) }
            }
            if event == .update, target.newerSent { return .skip(.olderTimestamp) }
            priority = self.delivery.budget.priority(
                requested: push.priority, alerting: push.isAlerting, sentInLastHour: target.recentPriority10,
                frequent: target.frequentPushes)
        }
        let topic = push.pushType == .liveActivity ? APNsRequest.liveActivityTopic(bundleID: self.delivery.bundleID) : self.delivery.bundleID
        return .send(
            APNsRequest(
                deviceToken: target.token, pushType: push.pushType, topic: topic, priority: priority,
                expiration: self.expiration(of: push), collapseID: push.collapseID, payload: push.body),
            target)
    }

    /// `apns-expiration`: the push's own expiry; for a Live Activity, never after the activity can be updated.
    func expiration(of push: ClaimedPush) -> Int64? {
        var expiry = push.expiresAt
        if case .liveActivity = push.kind {
            let lifetime = self.now().addingTimeInterval(LiveActivityLifetime.updatable)
            expiry = min(expiry ?? lifetime, lifetime)
        }
        return expiry.map { Int64($0.timeIntervalSince1970) }
    }

    /// Sends the requests, retrying per ``DeliveryPolicy`` (429, 5xx and no answer, with backoff and jitter): those
    /// to retry go again together, after the longest of their delays. Returns each request's outcome, in their order.
    ///
    /// - Throws: `CancellationError` when the fan-out is cancelled while some tokens wait for their retry: the batch is
    ///   not finished, so none of it is recorded and the part resumes from its last checkpoint (stopped, not failed).
    ///   An answer worth retrying never becomes a token's outcome because its worker was stopping.
    private func deliver(_ sends: [Send], of pushes: [ClaimedPush]) async throws -> [DispatchStore.Outcome] {
        var outcomes = [DispatchStore.Outcome?](repeating: nil, count: sends.count)
        var pending = Array(sends.indices)
        var attempt = 1
        while !pending.isEmpty {
            let responses = await self.apns.send(pending.map { sends[$0].request }, key: self.delivery.key, environment: self.delivery.environment)
            var retries: [Int] = []
            var delay = Duration.zero
            for (index, response) in zip(pending, responses) {
                let (request, target, push) = (sends[index].request, sends[index].target, pushes[sends[index].push])
                let action = self.configuration.delivery.action(for: response, attempt: attempt, jitter: Double.random(in: 0..<1))
                self.logger.trace("apns attempt", metadata: [
                    "push.id": "\(push.pushID.lowercaseString)", "part": "\(push.part)", "channel.id": "\(target.channelID.lowercaseString)",
                    "attempt": "\(attempt)", "response": "\(response)", "action": "\(action)",
                ])
                switch (action, response) {
                case (.retry(let after), _):
                    retries.append(index)
                    delay = max(delay, after)
                case (_, .accepted(let apnsID, let uniqueID)):
                    outcomes[index] = .init(target: target, status: 200, reason: nil, apnsID: apnsID, uniqueID: uniqueID, priority: request.priority)
                case (.tokenInvalid(let since), .rejected(let status, let reason, _)):
                    outcomes[index] = .init(
                        target: target, status: status, reason: reason, apnsID: nil, priority: request.priority, deadSince: since ?? .distantFuture)
                case (_, .rejected(let status, let reason, _)):
                    outcomes[index] = .init(target: target, status: status, reason: reason, apnsID: nil, priority: request.priority)
                case (_, .noResponse):
                    outcomes[index] = .init(target: target, status: 0, reason: nil, apnsID: nil, priority: request.priority)
                }
            }
            if !retries.isEmpty { try await Task.sleep(for: delay) }
            pending = retries
            attempt += 1
        }
        return outcomes.compactMap(\.self)
    }
}
