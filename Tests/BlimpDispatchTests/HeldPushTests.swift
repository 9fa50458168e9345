import BlimpCore
import BlimpDispatch
import BlimpSimulator
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// Activities started by push-to-start await their update token; the name's updates and ends meanwhile are held (the
/// newest kept) and go out to the token once the SDK reports it (AwaitingToken).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct HeldPushTests {
    static let start = DispatchHarness.liveActivity(
        "start", "match-5",
        #", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"}, "content_state": {"home": 0}, "alert": {"title": "Kick-off"}"#)

    @Test func anUpdateWhileAwaitingIsHeldAndGoesOutWithTheToken() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(3, name: nil, startToken: "MatchAttributes")
            let start = try await harness.push(Self.start)
            let started = try #require(try await harness.deliver([start]).first)
            #expect(started.counts.sent == 3, "\(started.counts)")
            let startTokens = try await harness.database.query(
                "SELECT token FROM push_to_start_tokens WHERE channel_id = \(devices[0].channelID)", logger: TestDatabase.logger
            ).decode(String.self).collect()
            let startToken = try #require(startTokens.first)
            let payload = try #require(harness.received(startToken).first?.payload)
            #expect(payload.contains(#""attributes":{"home":"Foxes","activityName":"match-5"}"#), "\(payload)")
            #expect(try await self.awaiting(harness) == 3)

            // Two updates while the activities await: each holds itself on all three, the newer replacing the older.
            let older = try await harness.push(DispatchHarness.liveActivity("update", "match-5", #", "content_state": {"home": 1}"#))
            let newer = try await harness.push(DispatchHarness.liveActivity("update", "match-5", #", "content_state": {"home": 2}"#))
            let held = try await harness.deliver([older, newer])
            #expect(held.map(\.counts.targets) == [0, 0] && held.map(\.counts.heldAwaitingToken) == [3, 3], "\(held.map(\.counts))")

            // The first device reports its activity's token: the newer update goes out to it, at its priority.
            let token = SimulatorHarness.randomToken()
            try await self.report(token, for: devices[0], startedAt: harness.clock.now, in: harness)
            let delivered = try await self.runWorker(harness) { try await harness.report(newer).counts.deliveredAfterToken == 1 }
            #expect(delivered)
            let received = harness.received(token)
            #expect(received.count == 1 && received.first?.payload.contains(#""content-state":{"home":2}"#) == true, "\(received)")
            #expect(received.first?.priority == 10)
            #expect(try await harness.report(older).counts.deliveredAfterToken == 0)
            #expect(try await self.awaiting(harness) == 2)

            // A late report from an older activity of the name (started before the start was sent, less the allowed
            // skew) sets its token, last writer wins, but releases nothing.
            let staleToken = SimulatorHarness.randomToken()
            let before = harness.clock.now.addingTimeInterval(-AwaitingToken.allowedClockSkew - 600)
            try await self.report(staleToken, for: devices[1], startedAt: before, in: harness)
            #expect(try await self.awaiting(harness) == 2)
            // A token of an activity that started long ago is answered and dropped.
            try await self.report(SimulatorHarness.randomToken(), for: devices[2], startedAt: harness.clock.now.addingTimeInterval(-2 * 86_400), in: harness)
            let tracked = try await harness.database.query(
                "SELECT count(*)::int FROM live_activities WHERE channel_id = \(devices[2].channelID)", logger: TestDatabase.logger
            ).decode(Int.self).collect()
            #expect(tracked == [0])

            // A second start skips the awaiting device and the active ones (the first device's, and the second's stale one).
            let again = try await harness.push(Self.start)
            let skipped = try #require(try await harness.deliver([again]).first)
            #expect(skipped.counts.sent == 0 && skipped.counts.skippedAwaitingToken == 1 && skipped.counts.skippedAlreadyActive == 2,
                    "\(skipped.counts)")
            #expect(harness.received(staleToken).isEmpty)

            // Past the activity's 8 hours the rest expire, counted on the start and on the held update.
            harness.clock.advance(by: LiveActivityLifetime.updatable + 60)
            let store = DispatchStore(client: harness.database, logger: TestDatabase.logger)
            #expect(try await store.expireAwaitingActivities(now: harness.clock.now, budget: .seconds(10)) == 2)
            #expect(try await harness.report(start).counts.expiredAwaitingToken == 2)
            #expect(try await harness.report(newer).counts.expiredAwaitingToken == 2)
            #expect(try await self.awaiting(harness) == 0)
        }
    }

    /// An end to `all`, or a per-user one to the device's channel, holds itself on the awaiting activity.
    @Test(arguments: [false, true]) func anEndWhileAwaitingEndsTheActivityWhenItsTokenComes(perUser: Bool) async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(1, name: nil, startToken: "MatchAttributes")
            _ = try await harness.deliver([try await harness.push(Self.start)])
            let audience = perUser ? #"{"ios_channel": "\#(devices[0].channelID.lowercaseString)"}"# : #""all""#
            let end = try await harness.push(
                DispatchHarness.liveActivity("end", "match-5", #", "priority": 5, "content_state": {"home": 3}"#, audience: audience))
            #expect(try await harness.deliver([end]).first?.counts.heldAwaitingToken == 1)
            let token = SimulatorHarness.randomToken()
            try await self.report(token, for: devices[0], startedAt: harness.clock.now, in: harness)
            #expect(try await self.runWorker(harness) { try await harness.report(end).counts.deliveredAfterToken == 1 })
            #expect(harness.received(token).first?.priority == 5)
            let states = try await harness.database.query(
                "SELECT state FROM live_activities WHERE channel_id = \(devices[0].channelID)", logger: TestDatabase.logger
            ).decode(String.self).collect()
            #expect(states == ["ended"])
        }
    }

    @Test func aReportedTokenWakesAnIdleWorkerToSendWhatItReleased() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(1, name: nil, startToken: "MatchAttributes")
            _ = try await harness.deliver([try await harness.push(Self.start)])
            let update = try await harness.push(DispatchHarness.liveActivity("update", "match-5", #", "content_state": {"home": 1}"#))
            let token = SimulatorHarness.randomToken()
            var reported = false
            // The worker's poll is ten minutes away: once it has held the update and gone idle, only the release's
            // notification wakes it.
            let delivered = try await self.runWorker(harness, pollInterval: .seconds(600)) {
                let counts = try await harness.report(update).counts
                if !reported, counts.heldAwaitingToken == 1 {
                    try await self.report(token, for: devices[0], startedAt: harness.clock.now, in: harness)
                    reported = true
                }
                return counts.deliveredAfterToken == 1
            }
            #expect(delivered)
            #expect(harness.received(token).count == 1)
        }
    }

    /// The SDK's `set update_token` for the activity tracked under the start's name.
    private func report(_ token: String, for device: DispatchHarness.Device, startedAt: Date, in harness: DispatchHarness) async throws {
        try await harness.channels.apply(
            CheckedChannelBatch(
                tags: TagOperations(), attributes: [],
                liveActivities: [.setActivity(name: "match-5", activityID: UUID().uuidString, token: token, startedAt: startedAt,
                                              actionMilliseconds: Int64(harness.clock.now.timeIntervalSince1970 * 1000))]),
            channelID: device.channelID, appID: harness.app.id)
    }

    private func awaiting(_ harness: DispatchHarness) async throws -> Int {
        try await harness.database.query(
            "SELECT count(*)::int FROM awaiting_activities WHERE state = 'awaiting'", logger: TestDatabase.logger
        ).decode(Int.self).collect().first ?? 0
    }

    /// Runs a worker, polling every `pollInterval`, until `done` holds (or 60 s pass).
    private func runWorker(
        _ harness: DispatchHarness, pollInterval: Duration = .milliseconds(200), until done: @escaping () async throws -> Bool
    ) async throws -> Bool {
        let worker = harness.worker { $0.pollInterval = pollInterval }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await worker.run() }
            defer { group.cancelAll() }
            for _ in 0..<600 {
                if try await done() { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
    }
}
