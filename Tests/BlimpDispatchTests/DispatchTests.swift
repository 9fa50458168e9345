import BlimpCore
import BlimpDispatch
import BlimpSimulator
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@Suite(.enabled(if: TestDatabase.isEnabled)) struct DispatchTests {
    @Test func anUpdateByNameReachesExactlyItsTokens() async throws {
        try await DispatchHarness.run { harness in
            let fans = try await harness.register(12, name: "match-1", tags: ["fans"])
            let others = try await harness.register(5, name: "match-1")
            let otherName = try await harness.register(6, name: "match-2", tags: ["fans"])
            let pushID = try await harness.push(DispatchHarness.liveActivity(
                "update", "match-1", #", "priority": 5, "content_state": {"home": 2, "p": 0.941}"#, audience: #"{"tag": "fans"}"#))
            let report = try #require(try await harness.deliver([pushID]).first)
            #expect(report.state == .done)
            #expect(report.counts.targets == 12 && report.counts.sent == 12, "\(report.counts)")

            for device in fans {
                let received = harness.received(device.token)
                #expect(received.count == 1)
                let delivery = try #require(received.first)
                #expect(delivery.pushType == .liveactivity)
                #expect(delivery.topic == "com.example.scores.push-type.liveactivity")
                #expect(delivery.priority == 5)
                #expect(delivery.payload == #"{"aps":{"timestamp":\#(report.timestamp!),"event":"update","content-state":{"home":2,"p":0.941}}}"#)
                #expect(delivery.outcome == .displayed)
            }
            for device in others + otherName { #expect(harness.received(device.token).isEmpty) }
        }
    }

    /// A start goes to push-to-start tokens once per channel (a channel where the name is active is skipped, an event
    /// with its reason); an end marks the activities ended, so a later update skips them.
    @Test func startOnceEndThenSkipEnded() async throws {
        try await DispatchHarness.run { harness in
            let fresh = try await harness.register(4, name: nil, startToken: "MatchAttributes")
            _ = try await harness.register(2, name: "match-9", startToken: "MatchAttributes")  // already active
            _ = try await harness.register(3, name: nil, startToken: "OtherAttributes")
            let start = try await harness.push(DispatchHarness.liveActivity(
                "start", "match-9",
                #", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"}, "content_state": {"home": 0}, "alert": {"title": "Kick-off"}"#))
            let started = try #require(try await harness.deliver([start]).first)
            #expect(started.counts.sent == 4 && started.counts.skippedAlreadyActive == 2, "\(started.counts)")
            // Each device skipped is an event with its reason; no delivery outcome.
            let skips = try await harness.database.query(
                "SELECT push_id, body->>'reason' FROM events WHERE type = 'SEND_SKIPPED' ORDER BY channel_id", logger: TestDatabase.logger
            ).decode((UUID, String).self).collect()
            #expect(skips.map(\.0) == [start, start] && skips.map(\.1) == ["already_active", "already_active"], "\(skips)")
            let outcomes = try await harness.database.query(
                "SELECT count(*)::int FROM delivery_outcomes WHERE push_id = \(start)", logger: TestDatabase.logger
            ).decode(Int.self).collect()
            #expect(outcomes == [4])
            let startTokens = try await harness.database.query(
                "SELECT token FROM push_to_start_tokens WHERE channel_id = ANY(\(fresh.map(\.channelID)))", logger: TestDatabase.logger
            ).decode(String.self).collect()
            for token in startTokens {
                let delivery = try #require(harness.received(token).first)
                #expect(delivery.payload.contains(#""input-push-token":1"#) && delivery.payload.contains(#""attributes-type":"MatchAttributes""#))
            }

            let end = try await harness.push(DispatchHarness.liveActivity("end", "match-9", #", "content_state": {"home": 3}"#))
            let ended = try #require(try await harness.deliver([end]).first)
            #expect(ended.counts.sent == 2)
            let states = try await harness.database.query(
                "SELECT state FROM live_activities WHERE name = 'match-9'", logger: TestDatabase.logger
            ).decode(String.self).collect()
            #expect(states == ["ended", "ended"])

            let late = try await harness.push(DispatchHarness.liveActivity("update", "match-9", #", "content_state": {"home": 4}"#))
            let skipped = try #require(try await harness.deliver([late]).first)
            #expect(skipped.counts.targets == 0 && skipped.counts.skippedEnded == 2, "\(skipped.counts)")
        }
    }

    /// Pushes of one name go in acceptance order, and the newest state wins: updates queued behind a newer update
    /// or end are superseded, and no token receives an older state after a newer one.
    @Test func newerPushesOfANameSupersedeOlderOnes() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(5, name: "m")
            var ids: [UUID] = []
            for minute in 1...3 {
                ids.append(try await harness.push(DispatchHarness.liveActivity("update", "m", #", "content_state": {"minute": \#(minute)}"#)))
            }
            let reports = try await harness.deliver(ids)
            #expect(reports.map(\.state) == [.superseded, .superseded, .done])
            // What a superseded update did not send is counted: all of it, since the newer ones were already waiting.
            #expect(reports.map(\.counts.superseded) == [5, 5, 0] && reports.map(\.counts.sent) == [0, 0, 5], "\(reports.map(\.counts))")
            for device in devices {
                #expect(harness.received(device.token).map(\.payload).allSatisfy { $0.contains(#""minute":3"#) })
            }
        }
    }

    /// Priority 10 over the token's budget goes at priority 5 (counted); an hour later the budget is back. The same for
    /// a fan-out (to `all`) and for per-user pushes (to the device's channel), which are sent many at once.
    @Test(arguments: [false, true]) func priorityTenIsRationedPerToken(perUser: Bool) async throws {
        try await DispatchHarness.run { harness in
            try await AppStore(client: harness.database, logger: TestDatabase.logger)
                .setBudget(PriorityBudget(perHour: 4, frequentPerHour: 8, startsPerHour: 10), appKey: harness.app.appKey)
            let device = try #require(try await harness.register(1, name: "m").first)
            let audience = perUser ? #"{"ios_channel": "\#(device.channelID.lowercaseString)"}"# : #""all""#
            var priorities: [Int] = []
            for minute in 1...5 {
                let id = try await harness.push(
                    DispatchHarness.liveActivity("update", "m", #", "content_state": {"minute": \#(minute)}"#, audience: audience))
                let report = try #require(try await harness.deliver([id]).first)
                priorities.append(report.counts.downgradedPriority == 1 ? 5 : 10)
                harness.clock.advance(by: 60)
            }
            // A plain update may use three quarters of the budget (3 of 4); the rest is kept for alerting pushes.
            #expect(priorities == [10, 10, 10, 5, 5])
            let alerting = try await harness.push(DispatchHarness.liveActivity(
                "update", "m", #", "content_state": {"minute": 6}, "alert": {"title": "Goal"}"#, audience: audience))
            #expect(try #require(try await harness.deliver([alerting]).first).counts.downgradedPriority == 0)
            #expect(harness.received(device.token).map(\.priority) == [10, 10, 10, 5, 5, 10])
            harness.clock.advance(by: 3600)
            let later = try await harness.push(DispatchHarness.liveActivity("update", "m", #", "content_state": {"minute": 99}"#, audience: audience))
            #expect(try #require(try await harness.deliver([later]).first).counts.downgradedPriority == 0)
        }
    }

    /// Activities tracked more than 8 hours ago get nothing; a token APNs reports unregistered is removed. The
    /// sandbox's `apns-unique-id` of each 200 is recorded with its outcome (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    @Test func expiredActivitiesAreSkippedAndDeadTokensPruned() async throws {
        try await DispatchHarness.run { harness in
            let old = try await harness.register(2, name: "m", startedAt: harness.clock.now.addingTimeInterval(-9 * 3600))
            let live = try await harness.register(3, name: "m")
            harness.simulator.apns.setState(.unregistered, for: DeviceToken(live[0].token)!)
            let id = try await harness.push(DispatchHarness.liveActivity("update", "m", #", "content_state": {"a": 1}"#))
            let report = try #require(try await harness.deliver([id]).first)
            #expect(report.counts.targets == 3 && report.counts.sent == 2, "\(report.counts)")
            #expect(report.counts.failed == [.rejected(.unregistered): 1] && report.counts.tokensPruned == 1, "\(report.counts)")
            for device in old { #expect(harness.received(device.token).isEmpty) }
            let remaining = try await harness.database.query(
                "SELECT count(*)::int FROM live_activities WHERE token = \(live[0].token)", logger: TestDatabase.logger
            ).decode(Int.self).collect()
            #expect(remaining == [0])
            let outcomes = try await harness.database.query(
                "SELECT status, reason, apns_unique_id::text FROM delivery_outcomes WHERE push_id = \(id) ORDER BY status",
                logger: TestDatabase.logger
            ).decode((Int, String?, String?).self).collect()
            #expect(outcomes.map(\.0) == [200, 200, 410])
            #expect(outcomes.map { $0.2.flatMap(UUID.init(uuidString:)) != nil } == [true, true, false], "\(outcomes)")
        }
    }

    /// Two workers on many pushes: every token gets its push exactly once; with the simulator answering 5% of
    /// requests 503 and closing connections every 200 streams, still everything is delivered. Each token has 10
    /// attempts: with the default 5, one of the 450 tokens drew five 503s in a row about once in 7,000 runs, which
    /// is the policy working, not a fault (`aTokenFailsOnlyAfterItsLastAttempt` checks that case).
    @Test func twoWorkersAndFaultsDeliverEverythingOnce() async throws {
        var settings = ConnectionSettings()
        settings.goAwayEvery = 200
        try await DispatchHarness.run(settings: settings) { harness in
            var faults = SimulatorFaults()
            faults.serviceUnavailableFraction = 0.05
            harness.simulator.apns.setFaults(faults)
            var devices: [String: [DispatchHarness.Device]] = [:]
            for name in ["a", "b", "c"] { devices[name] = try await harness.register(150, name: name) }
            var ids: [UUID] = []
            for name in ["a", "b", "c"] {
                ids.append(try await harness.push(DispatchHarness.liveActivity("update", name, #", "content_state": {"n": "\#(name)"}"#)))
            }
            let small: (inout WorkerConfiguration) -> Void = {
                $0.batchSize = 40
                $0.delivery.maxAttempts = 10
            }
            let reports = try await harness.deliver(ids, with: [harness.worker("w1", configure: small), harness.worker("w2", configure: small)])
            #expect(
                reports.allSatisfy { $0.state == .done && $0.counts.sent == 150 && $0.counts.failed.isEmpty },
                "\(reports.map(\.counts))\n\(harness.attempts.notAcceptedHistory)")
            for (name, group) in devices {
                for device in group {
                    let received = harness.received(device.token)
                    #expect(received.count == 1 && received[0].payload.contains(#""n":"\#(name)""#))
                }
            }
            let claimedBy = try await harness.database.query(
                "SELECT DISTINCT claimed_by FROM pushes", logger: TestDatabase.logger).decode(String.self).collect()
            #expect(Set(claimedBy).isSubset(of: ["w1", "w2"]))
        }
    }

    /// A token fails only once it has had every attempt the policy allows, each answered with something worth
    /// retrying: the report counts as failed exactly the tokens whose attempts say so.
    @Test func aTokenFailsOnlyAfterItsLastAttempt() async throws {
        try await DispatchHarness.run { harness in
            harness.simulator.apns.setFaults(SimulatorFaults(serviceUnavailableFraction: 0.5))
            _ = try await harness.register(60, name: "m")
            let id = try await harness.push(DispatchHarness.liveActivity("update", "m", #", "content_state": {"n": 1}"#))
            let policy = DeliveryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(10))
            let report = try #require(try await harness.deliver([id], with: [harness.worker { $0.delivery = policy }]).first)
            let failed = harness.attempts.notAccepted()
            #expect(
                failed.values.allSatisfy { $0.map(\.number) == [1, 2, 3] && $0.allSatisfy { $0.response.contains("ServiceUnavailable") } },
                "\(harness.attempts.notAcceptedHistory)")
            #expect(report.counts.sent == 60 - failed.count, "\(report.counts)")
            #expect(report.counts.failed == (failed.isEmpty ? [:] : [.rejected(.serviceUnavailable): failed.count]), "\(report.counts)")
        }
    }

    /// A worker stopped (cancelled) while a token waits for its retry stops there: the answer worth retrying does not
    /// become the token's outcome, nothing of the batch is recorded, and the worker that resumes the part delivers it.
    @Test func aWorkerStoppedWhileWaitingToRetryLeavesTheBatchToTheNext() async throws {
        try await DispatchHarness.run { harness in
            let device = try #require(try await harness.register(1, name: "m").first)
            var faults = SimulatorFaults()
            faults.tooManyRequestsTokens = [device.token]
            harness.simulator.apns.setFaults(faults)
            let id = try await harness.push(DispatchHarness.liveActivity("update", "m", #", "content_state": {"n": 1}"#))
            // A lease long enough that no claim loop of a starved worker takes the part up again meanwhile.
            let stopped = harness.worker("w1") {
                $0.lease = .seconds(60)
                $0.delivery = DeliveryPolicy(maxAttempts: 5, baseDelay: .seconds(20), maxDelay: .seconds(20))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await stopped.run() }
                for _ in 0..<600 where harness.attempts.history(of: device.channelID).isEmpty {
                    try await Task.sleep(for: .milliseconds(100))
                }
                group.cancelAll()
            }
            let attempts = harness.attempts.history(of: device.channelID)
            #expect(attempts.count == 1, "\(attempts)")
            let recorded = try await harness.database.query(
                "SELECT count(*)::int FROM delivery_outcomes WHERE push_id = \(id)", logger: TestDatabase.logger
            ).decode(Int.self).collect()
            #expect(recorded == [0])

            // The lease runs out, and another worker resumes the part.
            try await harness.database.query(
                "UPDATE push_parts SET lease_expires_at = now() WHERE push_id = \(id)", logger: TestDatabase.logger)
            harness.simulator.apns.setFaults(SimulatorFaults())
            let report = try #require(try await harness.deliver([id], with: [harness.worker("w2")]).first)
            #expect(report.state == .done && report.counts.sent == 1 && report.counts.failed.isEmpty, "\(report.counts)")
            #expect(harness.received(device.token).count == 1)
        }
    }

    /// A renewal moves the lease on while the worker holds the part, and says it still holds one it finished (without a
    /// lease then); it says the lease is lost once another worker claimed the part, or it was queued again.
    @Test func aRenewalExtendsTheLeaseUntilAnotherWorkerTakesThePart() async throws {
        try await DispatchHarness.run { harness in
            _ = try await harness.register(1, name: "m")
            let id = try await harness.push(DispatchHarness.liveActivity("update", "m", #", "content_state": {"n": 1}"#))
            let store = DispatchStore(client: harness.database, logger: TestDatabase.logger)
            let part = try #require(try await store.claim(worker: "w1", now: harness.clock.now, lease: .seconds(5)).first)
            let expiry = { () async throws -> [Double] in
                try await harness.database.query(
                    "SELECT extract(epoch FROM lease_expires_at - now())::float8 FROM push_parts WHERE push_id = \(id)", logger: TestDatabase.logger
                ).decode(Double.self).collect()
            }
            #expect(try await store.renewLeases(of: [part], worker: "w1", lease: .seconds(600)))
            #expect(try await expiry().allSatisfy { $0 > 500 })
            #expect(try await !store.renewLeases(of: [part], worker: "w2", lease: .seconds(600)))

            try await harness.database.query(
                "UPDATE push_parts SET claimed_by = 'w2' WHERE push_id = \(id)", logger: TestDatabase.logger)
            #expect(try await !store.renewLeases(of: [part], worker: "w1", lease: .seconds(600)))
            try await harness.database.query(
                "UPDATE push_parts SET claimed_by = NULL, state = 'queued' WHERE push_id = \(id)", logger: TestDatabase.logger)
            #expect(try await !store.renewLeases(of: [part], worker: "w1", lease: .seconds(600)))
            try await harness.database.query(
                "UPDATE push_parts SET claimed_by = 'w1', state = 'done', lease_expires_at = NULL WHERE push_id = \(id)", logger: TestDatabase.logger)
            #expect(try await store.renewLeases(of: [part], worker: "w1", lease: .seconds(600)))
            let unleased = try await harness.database.query(
                "SELECT count(*)::int FROM push_parts WHERE push_id = \(id) AND lease_expires_at IS NULL", logger: TestDatabase.logger
            ).decode(Int.self).collect()
            #expect(unleased == [1], "a finished part's lease was renewed")
        }
    }

    /// Every fault at once: 500s, 503s and 429s on 15% of requests, GOAWAY every 50 streams, a connection dropped
    /// with its streams in flight every 97, and an APNs slower than the workers' lease. Two workers still deliver every
    /// token: what APNs did not take is retried, and the lease renewed in flight keeps each batch with one worker, so
    /// each token gets its update once. Only a worker stalled past its lease (as a loaded machine stalls one) lets the
    /// other take the part over: then at most the batch it had in flight goes twice, and it stops sending. (That
    /// renewals extend the lease, and tell a worker it lost one, is ``aRenewalExtendsTheLeaseUntilAnotherWorkerTakesThePart()``.)
    @Test func aMixOfFaultsStillDeliversEveryTokenOnce() async throws {
        var settings = ConnectionSettings()
        settings.goAwayEvery = 50
        settings.dropEvery = 97
        // Slower than the lease: only its renewals (every third of it) keep a batch with its worker.
        settings.latencyMilliseconds = 3000
        let batchSize = 40
        try await DispatchHarness.run(settings: settings) { harness in
            harness.simulator.apns.setFaults(
                SimulatorFaults(internalServerErrorFraction: 0.05, serviceUnavailableFraction: 0.05, tooManyRequestsFraction: 0.05))
            var devices: [String: [DispatchHarness.Device]] = [:]
            var ids: [String: UUID] = [:]
            for name in ["a", "b"] {
                devices[name] = try await harness.register(80, name: name)
                ids[name] = try await harness.push(DispatchHarness.liveActivity("update", name, #", "content_state": {"n": "\#(name)"}"#))
            }
            let faulty: (inout WorkerConfiguration) -> Void = {
                $0.batchSize = batchSize
                $0.lease = .milliseconds(2500)
                // Enough attempts that 15% failures (and lost connections) on each leave no token behind.
                $0.delivery = DeliveryPolicy(maxAttempts: 10, baseDelay: .milliseconds(20), maxDelay: .milliseconds(200))
            }
            let reports = try await harness.deliver(
                Array(ids.values), with: [harness.worker("w1", configure: faulty), harness.worker("w2", configure: faulty)], within: .seconds(300))
            #expect(reports.allSatisfy { $0.state == .done && $0.counts.sent == 80 && $0.counts.failed.isEmpty }, "\(reports.map(\.counts))")
            let leases = harness.attempts.leaseHistory()
            #expect(leases.contains { $0.event == .renewed }, "no lease was renewed while APNs took longer than one")
            for (name, group) in devices {
                let claims = leases.count { $0.event == .claimed && $0.pushID == ids[name]!.lowercaseString }
                let received = group.map { harness.received($0.token) }
                #expect(received.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.payload.contains(#""n":"\#(name)""#) } }, "\(received)")
                // Each claim after the first (a takeover, or a retry of a failed part) may send again the batch that
                // was in flight.
                let twice = received.reduce(0) { $0 + max(0, $1.count - 1) }
                #expect(twice <= (claims - 1) * batchSize, "\(twice) deliveries of \(name) went twice in \(claims) claims")
            }
            let counters = harness.simulator.apns.counters()
            #expect(counters.rejected.values.reduce(0, +) > 0, "no fault was drawn: \(counters)")
        }
    }

    /// One large push is split into parts that two workers share: each token gets it exactly once, both workers
    /// send some of it, and the report adds the parts' counts up.
    @Test func twoWorkersShareOneFanOut() async throws {
        var settings = ConnectionSettings()
        settings.latencyMilliseconds = 20
        try await DispatchHarness.run(settings: settings) { harness in
            let devices = try await harness.register(240, name: "big")
            let id = try await harness.push(DispatchHarness.liveActivity("update", "big", #", "content_state": {"n": 1}"#))
            let oneLoop: (inout WorkerConfiguration) -> Void = { $0.batchSize = 20; $0.concurrentPushes = 1; $0.fanOutParts = 6 }
            let report = try #require(try await harness.deliver([id], with: [harness.worker("w1", configure: oneLoop), harness.worker("w2", configure: oneLoop)]).first)
            #expect(report.state == .done && report.counts.targets == 240 && report.counts.sent == 240, "\(report.counts)")
            for device in devices { #expect(harness.received(device.token).count == 1) }
            let parts = try await harness.database.query(
                "SELECT state, claimed_by FROM push_parts WHERE push_id = \(id)", logger: TestDatabase.logger
            ).decode((String, String).self).collect()
            #expect(parts.count == 6 && parts.allSatisfy { $0.0 == "done" }, "\(parts)")
            #expect(Set(parts.map(\.1)) == ["w1", "w2"], "\(parts)")
        }
    }
}

extension PostgresRowSequence {
    /// Every row decoded as `T`.
    func collect<T: PostgresDecodable & Sendable>(_ type: T.Type) async throws -> [T] {
        try await self.decode(T.self).reduce(into: []) { $0.append($1) }
    }
}

extension AsyncThrowingMapSequence {
    func collect() async throws -> [Element] { try await self.reduce(into: []) { $0.append($1) } }
}
