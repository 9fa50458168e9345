import BlimpCore
import BlimpDispatch
import BlimpSimulator
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// Per-user pushes (an update or end of one channel's or one named user's activities) are claimed, resolved, sent and
/// recorded many at once, with the rules a push sent alone follows.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct PerUserPushTests {
    /// Updates to channels and named users, and ends, drained by two workers in small batches: each device gets its
    /// own once, an update with an end of its audience waiting behind it is superseded by the end, ends end their
    /// activities, and every report adds up.
    @Test func perUserPushesReachTheirOwnDevicesOnceInOrder() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(60, name: "delivery")
            let users = try await harness.register(10, name: "order")
            var ids: [UUID] = []
            for (index, device) in devices.enumerated() {
                let audience = #"{"ios_channel": "\#(device.channelID.lowercaseString)"}"#
                ids.append(try await harness.push(DispatchHarness.liveActivity("update", "delivery", #", "content_state": {"user": \#(index)}"#, audience: audience)))
                if index < 10 {
                    ids.append(try await harness.push(DispatchHarness.liveActivity("end", "delivery", #", "content_state": {"user": \#(index)}"#, audience: audience)))
                }
            }
            // Five named users of two channels each.
            for user in 0..<5 {
                try await harness.database.query(
                    "INSERT INTO named_users (app_id, named_user_id) VALUES (\(harness.app.id), \("user-\(user)"))", logger: TestDatabase.logger)
                let channels = [users[2 * user].channelID, users[2 * user + 1].channelID]
                try await harness.database.query(
                    "UPDATE channels SET named_user_id = \("user-\(user)") WHERE app_id = \(harness.app.id) AND channel_id = ANY(\(channels))",
                    logger: TestDatabase.logger)
                ids.append(try await harness.push(DispatchHarness.liveActivity(
                    "update", "order", #", "content_state": {"user": \#(user)}"#, audience: #"{"named_user": "user-\#(user)"}"#)))
            }
            let small: (inout WorkerConfiguration) -> Void = { $0.batchSize = 16 }
            let reports = try await harness.deliver(ids, with: [harness.worker("w1", configure: small), harness.worker("w2", configure: small)])
            let superseded = reports.filter { $0.state == .superseded }
            #expect(superseded.count == 10 && superseded.allSatisfy { $0.counts.superseded == 1 }, "\(reports.map(\.state))")
            #expect(reports.allSatisfy { $0.state != .failed && $0.counts.failed.isEmpty }, "\(reports.map(\.state))")
            // 50 updates and 10 ends to channels, 5 named users' updates to 2 channels each.
            let sent: Int = reports.map(\.counts.sent).reduce(0, +)
            #expect(sent == 70, "\(reports.map(\.counts))")
            for (index, device) in devices.enumerated() {
                let received: [String] = harness.received(device.token).map(\.payload)
                let events: [String] = index < 10 ? ["end"] : ["update"]
                let inOrder = received.count == events.count && zip(received, events).allSatisfy { $0.contains(#""event":"\#($1)""#) }
                #expect(inOrder, "\(received)")
                #expect(received.allSatisfy { $0.contains(#""user":\#(index)"#) })
            }
            for (index, device) in users.enumerated() {
                #expect(harness.received(device.token).map { $0.payload.contains(#""user":\#(index / 2)"#) } == [true])
            }
            let ended = try await harness.database.query(
                "SELECT count(*)::int FROM live_activities WHERE app_id = \(harness.app.id) AND name = 'delivery' AND state = 'ended'",
                logger: TestDatabase.logger
            ).decode(Int.self).collect()
            #expect(ended == [10])
        }
    }

    /// A claim takes the app's oldest claimable push; when it is per-user, the app's next per-user pushes come with it,
    /// up to the limit, and another app's push still waits no more than a claim.
    @Test func aClaimTakesPerUserPushesTogetherAndAppsTakeTurns() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(30, name: "delivery")
            let (other, _) = try await TestApps.create(named: "Orders", in: harness.database, serverKey: harness.serverKey)
            let tagPush = try await harness.push(DispatchHarness.liveActivity("update", "score", #", "content_state": {"s": 1}"#))
            for device in devices {
                try await harness.push(DispatchHarness.liveActivity(
                    "update", "delivery", #", "content_state": {"s": 1}"#, audience: #"{"ios_channel": "\#(device.channelID.lowercaseString)"}"#))
            }
            let single = try Push.pushes(in: try RawJSONParser.parse(DispatchHarness.liveActivity(
                "update", "delivery", #", "content_state": {"s": 1}"#, audience: #"{"named_user": "someone"}"#).utf8))
            guard case .accepted = try await harness.intake.accept(try PushSubmission(appID: other.id, pushes: single, idempotencyKey: nil)) else {
                throw DispatchHarness.Refused()
            }
            let store = DispatchStore(client: harness.database, logger: TestDatabase.logger)
            var claims: [[ClaimedPush]] = []
            for _ in 0..<4 { claims.append(try await store.claim(worker: "w", now: harness.clock.now, lease: .seconds(30), limit: 20)) }
            #expect(claims.map(\.count) == [1, 1, 20, 10], "\(claims.map(\.count))")
            #expect(claims[0].first?.pushID == tagPush && claims[0].first?.isPerUser == false)
            #expect(claims[1].first?.appID == other.id && claims[1].first?.isPerUser == true)
            #expect(claims[2...].joined().allSatisfy { $0.isPerUser && $0.appID == harness.app.id })
        }
    }

    /// A per-user push whose stored row cannot be read fails alone, naming its column; the others claimed with it go.
    @Test func anUnreadablePerUserPushFailsAlone() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(5, name: "delivery")
            var ids: [UUID] = []
            for device in devices {
                ids.append(try await harness.push(DispatchHarness.liveActivity(
                    "update", "delivery", #", "content_state": {"s": 1}"#, audience: #"{"ios_channel": "\#(device.channelID.lowercaseString)"}"#)))
            }
            try await harness.database.query("UPDATE pushes SET apns_body = NULL WHERE push_id = \(ids[2])", logger: TestDatabase.logger)
            let reports = try await harness.deliver(ids)
            #expect(reports.map(\.state) == [.done, .done, .failed, .done, .done])
            #expect(reports[2].failureReason == "the stored push cannot be read: apns_body: NULL", "\(reports[2].failureReason ?? "")")
            for (index, device) in devices.enumerated() { #expect(harness.received(device.token).count == (index == 2 ? 0 : 1)) }
        }
    }

    /// A named user with more channels than a batch takes is sent by a fan-out of its own, every channel once.
    @Test func aNamedUserOfManyChannelsIsFannedOutAlone() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(12, name: "order")
            try await harness.database.query(
                "INSERT INTO named_users (app_id, named_user_id) VALUES (\(harness.app.id), 'many')", logger: TestDatabase.logger)
            try await harness.database.query(
                "UPDATE channels SET named_user_id = 'many' WHERE app_id = \(harness.app.id)", logger: TestDatabase.logger)
            let id = try await harness.push(DispatchHarness.liveActivity(
                "update", "order", #", "content_state": {"s": 1}"#, audience: #"{"named_user": "many"}"#))
            let report = try #require(try await harness.deliver([id], with: [harness.worker { $0.batchSize = 5 }]).first)
            #expect(report.state == .done && report.counts.sent == 12 && report.counts.targets == 12, "\(report.counts)")
            for device in devices { #expect(harness.received(device.token).count == 1) }
        }
    }
}
