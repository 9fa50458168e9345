import BlimpCore
import BlimpDispatch
import BlimpSimulator
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// A name shared by many users, each updated alone: pushes are ordered, superseded and stamped per activity (a name on
/// a channel), not per name.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct SharedNameTests {
    /// 5,000 users each track an activity named `delivery`; each gets one update to its own channel, half of them with
    /// the caller's timestamp (the same for all) and half without. Every update reaches its device exactly once, and
    /// none is superseded by another user's.
    @Test func eachUsersUpdateOfASharedNameIsDeliveredOnce() async throws {
        try await DispatchHarness.run { harness in
            let users = 5000
            try await harness.database.query(
                """
                INSERT INTO channels (app_id, channel_id, opt_in) SELECT \(harness.app.id), md5('user/' || i)::uuid, true
                FROM generate_series(1, \(users)) i
                """,
                logger: TestDatabase.logger)
            try await harness.database.query(
                """
                INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
                SELECT \(harness.app.id), md5('user/' || i)::uuid, 'delivery', 'a' || i, md5('t/' || i) || md5('u/' || i), 'active', \(harness.clock.now), 1
                FROM generate_series(1, \(users)) i
                """,
                logger: TestDatabase.logger)
            let devices = try await harness.database.query(
                "SELECT channel_id, token FROM live_activities WHERE app_id = \(harness.app.id) ORDER BY channel_id", logger: TestDatabase.logger
            ).decode((UUID, String).self).collect()
            let callerTimestamp = Int64(harness.clock.now.timeIntervalSince1970)
            // Posted from 32 lanes at once, as a backend would.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<32 {
                    group.addTask {
                        for (index, (channelID, _)) in devices.enumerated() where index % 32 == lane {
                            let timestamp = index.isMultiple(of: 2) ? #", "timestamp": \#(callerTimestamp)"# : ""
                            try await harness.push(DispatchHarness.liveActivity(
                                "update", "delivery", #", "content_state": {"user": \#(index)}\#(timestamp)"#,
                                audience: #"{"ios_channel": "\#(channelID.lowercaseString)"}"#))
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Batches of 100: on a machine busy with the whole suite, a batch of 1,000 can outlast the store's 30 s
            // deadline, and a batch given up on is sent again.
            let small: (inout WorkerConfiguration) -> Void = { $0.batchSize = 100 }
            try await harness.drain(with: [harness.worker("w1", configure: small), harness.worker("w2", configure: small)], within: .seconds(300))

            let states = try await harness.database.query(
                "SELECT state, count(*)::int FROM pushes WHERE app_id = \(harness.app.id) GROUP BY state", logger: TestDatabase.logger
            ).decode((String, Int).self).collect()
            #expect(states.map(\.0) == ["done"] && states.map(\.1) == [users], "\(states)")
            let counts = try await harness.database.query(
                """
                SELECT coalesce(sum((counts->>'sent')::int), 0)::int, coalesce(sum((counts->>'superseded')::int), 0)::int
                FROM push_parts WHERE app_id = \(harness.app.id)
                """,
                logger: TestDatabase.logger
            ).decode((Int, Int).self).collect()
            #expect(counts.first?.0 == users && counts.first?.1 == 0, "\(counts)")
            var deliveredTwice = 0
            var missed = 0
            for (index, (_, token)) in devices.enumerated() {
                let received = harness.received(token)
                if received.count > 1 { deliveredTwice += 1 }
                if received.first.map({ $0.payload.contains(#""user":\#(index)}"#) && $0.outcome == .displayed }) != true { missed += 1 }
            }
            #expect(deliveredTwice == 0 && missed == 0, "\(deliveredTwice) devices got more than one update, \(missed) not their own")
        }
    }

    /// Two updates to one user's activity in the same second are both accepted, and the device ends on the second:
    /// it gets them in that order, or only the second (the first superseded while it waited).
    @Test func twoUpdatesOfOneActivityInOneSecondEndOnTheSecond() async throws {
        try await DispatchHarness.run { harness in
            let device = try #require(try await harness.register(1, name: "delivery").first)
            _ = try await harness.register(3, name: "delivery")
            let audience = #"{"ios_channel": "\#(device.channelID.lowercaseString)"}"#
            var ids: [UUID] = []
            for step in 1...2 {
                ids.append(try await harness.push(DispatchHarness.liveActivity(
                    "update", "delivery", #", "content_state": {"step": \#(step)}"#, audience: audience)))
            }
            let reports = try await harness.deliver(ids, with: [harness.worker("w1"), harness.worker("w2")])
            #expect(reports[1].state == .done && reports[1].counts.sent == 1, "\(reports.map(\.counts))")
            let stamps = try reports.map { try #require($0.timestamp) }
            #expect(stamps[1] > stamps[0], "\(stamps)")
            let received = harness.received(device.token)
            #expect(received.last?.payload.contains(#""step":2"#) == true && received.count <= 2, "\(received.map(\.payload))")
            #expect(received.allSatisfy { $0.outcome == .displayed })
        }
    }

    /// A caller's timestamps decide what is newer: an update accepted after another but carrying an older timestamp
    /// is accepted, and skipped for the device whose activity was already sent the newer one (iOS would ignore it),
    /// counted `superseded`; an end goes whatever its timestamp, since devices apply it.
    @Test func anUpdateOlderThanWhatItsActivityWasSentIsSkippedAndAnEndStillGoes() async throws {
        try await DispatchHarness.run { harness in
            let device = try #require(try await harness.register(1, name: "delivery").first)
            let audience = #"{"ios_channel": "\#(device.channelID.lowercaseString)"}"#
            let now = Int64(harness.clock.now.timeIntervalSince1970)
            var reports: [PushReport] = []
            for (event, offset) in [("update", 10), ("update", 5), ("end", 1)] {
                let id = try await harness.push(DispatchHarness.liveActivity(
                    event, "delivery", #", "content_state": {"at": \#(offset)}, "timestamp": \#(now + Int64(offset))"#, audience: audience))
                reports += try await harness.deliver([id])
            }
            #expect(reports.map(\.state) == [.done, .done, .done])
            #expect(reports.map(\.counts.sent) == [1, 0, 1] && reports.map(\.counts.superseded) == [0, 1, 0], "\(reports.map(\.counts))")
            #expect(harness.received(device.token).map { $0.payload.contains(#""at":10"#) } == [true, false])
        }
    }

    /// A user's update stamped ahead of the clock (the caller's future timestamp), then a tag's update of the name
    /// stamped at its acceptance: the tag's reaches every fan but that user, whose activity already shows a newer one.
    @Test func aTagsUpdateSkipsTheActivityAlreadySentANewerTimestamp() async throws {
        try await DispatchHarness.run { harness in
            let fans = try await harness.register(6, name: "delivery", tags: ["fans"])
            let ahead = Int64(harness.clock.now.timeIntervalSince1970) + 100
            let own = try await harness.push(DispatchHarness.liveActivity(
                "update", "delivery", #", "content_state": {"from": "user"}, "timestamp": \#(ahead)"#,
                audience: #"{"ios_channel": "\#(fans[2].channelID.lowercaseString)"}"#))
            let tag = try await harness.push(DispatchHarness.liveActivity(
                "update", "delivery", #", "content_state": {"from": "tag"}"#, audience: #"{"tag": "fans"}"#))
            let reports = try await harness.deliver([own, tag])
            #expect(reports[1].counts.sent == 5 && reports[1].counts.superseded == 1, "\(reports[1].counts)")
            #expect(harness.received(fans[2].token).map { $0.payload.contains(#""from":"user""#) } == [true])
        }
    }

    /// A tag's update of a name and then one user's update of it: the user's device, in both audiences, gets them in
    /// the order they were accepted, while the tag's other devices get the tag's.
    @Test func aTagsUpdateAndAUsersUpdateReachTheirSharedDeviceInAcceptanceOrder() async throws {
        try await DispatchHarness.run { harness in
            let fans = try await harness.register(30, name: "delivery", tags: ["fans"])
            let user = fans[17]
            let tag = try await harness.push(DispatchHarness.liveActivity(
                "update", "delivery", #", "content_state": {"from": "tag"}"#, audience: #"{"tag": "fans"}"#))
            let own = try await harness.push(DispatchHarness.liveActivity(
                "update", "delivery", #", "content_state": {"from": "user"}"#,
                audience: #"{"ios_channel": "\#(user.channelID.lowercaseString)"}"#))
            let workers = ["w1", "w2"].map { name in harness.worker(name) { $0.batchSize = 4 } }
            let reports = try await harness.deliver([tag, own], with: workers)
            #expect(reports.map(\.state) == [.done, .done])
            #expect(reports.map(\.counts.sent) == [30, 1], "\(reports.map(\.counts))")
            let received = harness.received(user.token).map { $0.payload.contains(#""from":"user""#) ? "user" : "tag" }
            #expect(received == ["tag", "user"])
            for fan in fans where fan.token != user.token {
                #expect(harness.received(fan.token).count == 1)
            }
        }
    }
    /// Which pushes of a name a worker may claim while the older ones are unfinished: those to other channels (or
    /// other named users) at once; one to the same channel, a named user's (whose channels may include it) or a tag's
    /// only once every older push that may share an activity with it is finished.
    @Test func aPushWaitsOnlyForOlderPushesThatMayShareAnActivity() async throws {
        try await DispatchHarness.run { harness in
            let (first, second) = (UUID.random().lowercaseString, UUID.random().lowercaseString)
            func push(_ audience: String) async throws -> UUID {
                try await harness.push(DispatchHarness.liveActivity("update", "delivery", #", "content_state": {"s": 1}"#, audience: audience))
            }
            let toFirst = try await push(#"{"ios_channel": "\#(first)"}"#)
            let toSecond = try await push(#"{"ios_channel": "\#(second)"}"#)
            let toFirstAgain = try await push(#"{"and": [{"tag": "vip"}, {"ios_channel": "\#(first)"}]}"#)
            let toUser = try await push(#"{"named_user": "user-9"}"#)
            let toOtherUser = try await push(#"{"named_user": "user-10"}"#)
            let toTag = try await push(#"{"tag": "fans"}"#)
            let store = DispatchStore(client: harness.database, logger: TestDatabase.logger)
            func claimAll() async throws -> Set<UUID> {
                var claimed: Set<UUID> = []
                while let part = try await store.claim(worker: "w", now: harness.clock.now, lease: .seconds(30)).first { claimed.insert(part.pushID) }
                return claimed
            }
            func finish(_ id: UUID) async throws {
                try await harness.database.query("UPDATE pushes SET state = 'done' WHERE push_id = \(id)", logger: TestDatabase.logger)
            }
            #expect(try await claimAll() == [toFirst, toSecond])
            try await finish(toFirst)
            #expect(try await claimAll() == [toFirstAgain])
            try await finish(toSecond)
            try await finish(toFirstAgain)
            #expect(try await claimAll() == [toUser, toOtherUser])
            try await finish(toUser)
            #expect(try await claimAll() == [])
            try await finish(toOtherUser)
            #expect(try await claimAll() == [toTag])
        }
    }
}

extension DispatchHarness {
    /// Runs `workers` until the app has no queued or sending push (or `bound` passes), then stops them.
    func drain(with workers: [Worker], within bound: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in workers { group.addTask { try await worker.run() } }
            defer { group.cancelAll() }
            let deadline = ContinuousClock.now + bound
            while ContinuousClock.now < deadline {
                let unfinished = try await self.database.query(
                    "SELECT count(*)::int FROM pushes WHERE app_id = \(self.app.id) AND state IN ('queued', 'sending')",
                    logger: TestDatabase.logger
                ).decode(Int.self).collect()
                if unfinished == [0] { return }
                try await Task.sleep(for: .milliseconds(200))
            }
            Issue.record("pushes not finished within \(bound)")
        }
    }
}
