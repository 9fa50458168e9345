import BlimpCore
import BlimpDispatch
import BlimpSimulator
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// No push is ever stuck: what cannot be sent fails with its reason, and the name's later pushes go on.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct StuckPushTests {
    /// Nesting that the intake accepts (16 levels, a tag list at the bottom) is what the worker reads back: the
    /// worker's earlier re-parse refused it, and the push was claimed forever.
    @Test func theDeepestAudienceTheIntakeAcceptsIsDelivered() async throws {
        try await DispatchHarness.run { harness in
            let fans = try await harness.register(3, name: "deep", tags: ["fans"])
            var audience = #"{"tag": ["fans", "ultras"]}"#
            for level in 0..<(Audience.maximumDepth - 1) { audience = level.isMultiple(of: 2) ? #"{"and": [\#(audience)]}"# : #"{"or": [\#(audience)]}"# }
            let pushID = try await harness.push(DispatchHarness.liveActivity("update", "deep", #", "content_state": {"s": 1}"#, audience: audience))
            let report = try #require(try await harness.deliver([pushID]).first)
            #expect(report.state == .done && report.counts.sent == 3, "\(report.state) \(report.failureReason ?? "") \(report.counts)")
            for device in fans { #expect(harness.received(device.token).count == 1) }
        }
    }

    /// A stored push the worker cannot read fails with the reason in its report; the next push of its name is sent.
    @Test func anUnreadablePushFailsAndItsNameGoesOn() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(4, name: "match")
            let broken = try await harness.push(DispatchHarness.liveActivity("update", "match", #", "content_state": {"s": 1}"#))
            try await harness.database.query(
                #"UPDATE pushes SET audience = '{"segment": "x"}' WHERE push_id = \#(broken)"#, logger: TestDatabase.logger)
            let next = try await harness.push(DispatchHarness.liveActivity("update", "match", #", "content_state": {"s": 2}"#))
            let reports = try await harness.deliver([broken, next])
            #expect(reports[0].state == .failed)
            #expect(reports[0].failureReason?.contains("cannot be read") == true, "\(reports[0].failureReason ?? "")")
            #expect(reports[1].state == .done && reports[1].counts.sent == 4)
            for device in devices { #expect(harness.received(device.token).count == 1) }
        }
    }

    /// A stored push with a column the worker cannot read (NULL where a value is needed, or of another type after
    /// the schema changed under the worker) fails at once naming the column, instead of being claimed again and again.
    @Test func aColumnThatCannotBeReadFailsThePushNamingIt() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(2, name: "a") + harness.register(2, name: "b")
            let missing = try await harness.push(DispatchHarness.liveActivity("update", "a", #", "content_state": {"s": 1}"#))
            let mistyped = try await harness.push(DispatchHarness.liveActivity("update", "b", #", "content_state": {"s": 1}"#))
            try await harness.database.query("UPDATE pushes SET apns_body = NULL WHERE push_id = \(missing)", logger: TestDatabase.logger)
            try await harness.database.query(
                "ALTER TABLE pushes ALTER COLUMN alerting DROP DEFAULT, ALTER COLUMN alerting TYPE text USING alerting::text",
                logger: TestDatabase.logger)
            let reports = try await harness.deliver([missing, mistyped])
            #expect(reports.map(\.state) == [.failed, .failed])
            #expect(reports[0].failureReason == "the stored push cannot be read: apns_body: NULL", "\(reports[0].failureReason ?? "")")
            #expect(reports[1].failureReason?.hasPrefix("the stored push cannot be read: alerting: a ") == true, "\(reports[1].failureReason ?? "")")
            for device in devices { #expect(harness.received(device.token).isEmpty) }
        }
    }

    /// APNs refusing the app itself (here its team id no longer matches its key) fails the push after the first
    /// batch, with APNs's reason, instead of sending every other token to the same answer.
    @Test func apnsRefusingTheAppFailsThePushWithItsReason() async throws {
        try await DispatchHarness.run { harness in
            _ = try await harness.register(30, name: "match")
            try await harness.database.query("UPDATE apps SET apns_team_id = 'ZZZ999ZZZZ'", logger: TestDatabase.logger)
            let pushID = try await harness.push(DispatchHarness.liveActivity("update", "match", #", "content_state": {"s": 1}"#))
            let workers = [harness.worker { $0.batchSize = 10 }]
            let report = try #require(try await harness.deliver([pushID], with: workers).first)
            #expect(report.state == .failed)
            #expect(report.failureReason == "APNs refused the app's credentials or topic: InvalidProviderToken")
            #expect(report.counts.targets == 10 && report.counts.failed == [.rejected(.invalidProviderToken): 10], "\(report.counts)")
        }
    }

    /// A part that keeps failing is tried again after its delay, by the database's clock, and then fails its push;
    /// a failed push can be retried and then cancelled only when it has failed again.
    @Test func aPartThatKeepsFailingIsRetriedThenFailsItsPush() async throws {
        try await DispatchHarness.run { harness in
            let store = DispatchStore(client: harness.database, logger: TestDatabase.logger)
            _ = try await harness.register(2, name: "match")
            let pushID = try await harness.push(DispatchHarness.liveActivity("update", "match", #", "content_state": {"s": 1}"#))
            var policy = PartRetryPolicy()
            policy.maximumAttempts = 2
            policy.firstDelay = .seconds(60)
            let first = try #require(try await store.claim(worker: "w", now: harness.clock.now, lease: .seconds(30)).first)
            let retried = try await store.partFailed(
                appID: first.appID, pushID: pushID, part: first.part, reason: "database gone", permanent: false, worker: "w", policy: policy)
            #expect(retried == .queued)
            #expect(try await store.claim(worker: "w", now: harness.clock.now, lease: .seconds(30)).isEmpty, "not before its delay")
            try await harness.database.query("UPDATE push_parts SET retry_at = now() - interval '1 second'", logger: TestDatabase.logger)
            let second = try #require(try await store.claim(worker: "w2", now: harness.clock.now, lease: .seconds(30)).first)
            #expect(second.pushID == pushID)
            let failed = try await store.partFailed(
                appID: second.appID, pushID: pushID, part: second.part, reason: "database gone", permanent: false, worker: "w2", policy: policy)
            #expect(failed == .failed)
            let report = try await harness.report(pushID)
            #expect(report.state == .failed && report.failureReason == "database gone")

            let control = PushControl(client: harness.database, logger: TestDatabase.logger)
            #expect(try await control.retry(pushID, appID: harness.app.id, by: .commandLine) == .changed)
            #expect(try await control.cancel(pushID, appID: harness.app.id, by: .commandLine) == .notAllowed(.sending))
            let delivered = try #require(try await harness.deliver([pushID]).first)
            #expect(delivered.state == .done && delivered.counts.sent == 2, "\(delivered.counts)")
        }
    }

    /// An APNs slower than the lease: the worker renews its lease while the batch is in flight, so the other worker
    /// never takes the part over and sends the batch again.
    @Test func aSlowAPNsNeverMakesTwoWorkersSendTheSameBatch() async throws {
        var slow = ConnectionSettings()
        // Two and a half leases: renewed twice or more while the batch is in flight. A lease of 2 s (not 1) leaves room
        // for the renewal on a machine busy with the rest of the suite.
        slow.latencyMilliseconds = 5000
        try await DispatchHarness.run(settings: slow) { harness in
            let devices = try await harness.register(20, name: "slow")
            let pushID = try await harness.push(DispatchHarness.liveActivity("update", "slow", #", "content_state": {"s": 1}"#))
            let workers = ["w1", "w2"].map { name in
                harness.worker(name) {
                    $0.lease = .seconds(2)
                    $0.batchSize = 100
                }
            }
            let report = try #require(try await harness.deliver([pushID], with: workers).first)
            #expect(report.state == .done && report.counts.sent == 20, "\(report.counts)")
            for device in devices { #expect(harness.received(device.token).count == 1, "sent twice") }
        }
    }
}

@Suite(.enabled(if: TestDatabase.isEnabled)) struct FairClaimTests {
    /// One app's backlog of queued pushes delays another app's push by a claim, not by the backlog: the worker
    /// takes the next new push from the app that waited longest.
    @Test func anotherAppsPushGoesAheadOfABacklog() async throws {
        try await DispatchHarness.run { harness in
            let (other, _) = try await TestApps.create(named: "Orders", in: harness.database, serverKey: harness.serverKey)
            for index in 0..<200 {
                try await harness.push(DispatchHarness.liveActivity("update", "backlog-\(index)", #", "content_state": {"s": 1}"#))
            }
            let single = try Push.pushes(in: try RawJSONParser.parse(DispatchHarness.liveActivity("update", "single", #", "content_state": {"s": 1}"#).utf8))
            let submission = try PushSubmission(appID: other.id, pushes: single, idempotencyKey: nil)
            guard case .accepted = try await harness.intake.accept(submission) else { throw DispatchHarness.Refused() }
            let store = DispatchStore(client: harness.database, logger: TestDatabase.logger)
            var claimed: [Int64] = []
            for _ in 0..<4 {
                claimed.append(try #require(try await store.claim(worker: "w", now: harness.clock.now, lease: .seconds(30)).first).appID)
            }
            // Turns alternate while both apps have pushes queued: the single push is the first or second claimed.
            #expect(claimed.prefix(2).contains(other.id), "\(claimed)")
            #expect(claimed.filter { $0 == other.id }.count == 1)
        }
    }
}
