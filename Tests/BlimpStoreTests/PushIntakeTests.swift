import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct PushIntakeTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// An intake and reports on a fresh database with two apps, and a clock the test moves.
    func withIntake(_ body: (PushIntake, PushReports, App, App, TestClock, PostgresClient) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let key = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: key)
            let (other, _) = try await TestApps.create(named: "Other", in: client, serverKey: key)
            let clock = TestClock(Self.start)
            let intake = PushIntake(client: client, logger: TestDatabase.logger, now: { clock.now })
            try await body(intake, PushReports(client: client, logger: TestDatabase.logger), app, other, clock, client)
        }
    }

    func update(_ name: String, timestamp: Int64? = nil, state: String = #"{"home": 1}"#) throws -> Push {
        let stamp = timestamp.map { #", "timestamp": \#($0)"# } ?? ""
        return try Self.push(#"{"event": "update", "name": "\#(name)", "content_state": \#(state)\#(stamp)}"#)
    }

    static func push(_ liveActivity: String) throws -> Push {
        let body = #"{"audience": {"tag": "fans"}, "device_types": ["ios"], "notification": {"ios": {"live_activity": \#(liveActivity)}}}"#
        return try Push.pushes(in: try RawJSONParser.parse(body.utf8))[0]
    }

    func count(_ client: PostgresClient, _ sql: String = "SELECT count(*) FROM pushes") async throws -> Int {
        try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestDatabase.logger).decode(Int.self).array()[0]
    }

    func bodies(_ client: PostgresClient) async throws -> [String] {
        try await client.query("SELECT apns_body FROM pushes ORDER BY aps_timestamp", logger: TestDatabase.logger)
            .decode(String.self).array()
    }

    @Test func anAcceptedPushIsQueuedWithItsAPNsBody() async throws {
        try await self.withIntake { intake, reports, app, _, _, client in
            let push = try self.update("match-1", state: #"{"score": 0.941, "Big": 123456789012345678901234}"#)
            let submission = try PushSubmission(appID: app.id, pushes: [push], idempotencyKey: nil)
            #expect(try await intake.accept(submission) == .accepted(operationID: submission.operationID, pushIDs: submission.pushIDs))
            #expect(try await self.bodies(client) == [
                #"{"aps":{"timestamp":1800000000,"event":"update","content-state":{"score":0.941,"Big":123456789012345678901234}}}"#
            ])
            let report = try await reports.report(submission.pushIDs[0], appID: app.id)
            #expect(report.state == .queued)
            #expect(report.name == "match-1")
            #expect(report.timestamp == 1_800_000_000)
            #expect(report.acceptedAt == Self.start)
            // The request as accepted (PostgreSQL's jsonb orders keys its own way, and keeps numbers exact).
            let state = report.request["notification"]?["ios"]?["live_activity"]?["content_state"]
            #expect(state?["score"] == .number("0.941"))
            #expect(state?["Big"] == .number("123456789012345678901234"))
        }
    }

    /// Pushes of one name get strictly increasing timestamps, even within one second; a given timestamp that is not
    /// newer is refused with nothing of its request queued.
    @Test func timestampsOfANameOnlyMoveForward() async throws {
        try await self.withIntake { intake, _, app, other, clock, client in
            let first = try PushSubmission(appID: app.id, pushes: [try self.update("m"), try self.update("m")], idempotencyKey: nil)
            _ = try await intake.accept(first)
            let second = try PushSubmission(appID: app.id, pushes: [try self.update("m")], idempotencyKey: nil)
            _ = try await intake.accept(second)
            #expect(try await self.count(client, "SELECT count(DISTINCT aps_timestamp) FROM pushes") == 3)
            #expect(try await self.count(client, "SELECT max(aps_timestamp) - min(aps_timestamp) FROM pushes") == 2)

            // Given, not newer: refused; the request's other push is not queued either.
            let stale = try PushSubmission(appID: app.id, pushes: [try self.update("n"), try self.update("m", timestamp: 1_800_000_002)], idempotencyKey: nil)
            #expect(try await intake.accept(stale) == .staleTimestamp(pushIndex: 1, name: "m", timestamp: 1_800_000_002, last: 1_800_000_002))
            #expect(try await self.count(client) == 3)

            // Another app's name is its own; a newer given timestamp is kept as given.
            _ = try await intake.accept(PushSubmission(appID: other.id, pushes: [try self.update("m", timestamp: 1_000_000_000)], idempotencyKey: nil))
            clock.advance(by: 60)
            _ = try await intake.accept(PushSubmission(appID: app.id, pushes: [try self.update("m", timestamp: 1_800_000_030)], idempotencyKey: nil))
            _ = try await intake.accept(PushSubmission(appID: app.id, pushes: [try self.update("m")], idempotencyKey: nil))
            let stamps = try await client.query(
                "SELECT aps_timestamp FROM pushes WHERE app_id = \(app.id) ORDER BY accepted_at, aps_timestamp", logger: TestDatabase.logger
            ).decode(Int64.self).array()
            #expect(stamps == [1_800_000_000, 1_800_000_001, 1_800_000_002, 1_800_000_030, 1_800_000_060])
        }
    }

    @Test func anIdempotencyKeyAnswersItsFirstAnswerForADay() async throws {
        try await self.withIntake { intake, _, app, other, clock, client in
            let first = try PushSubmission(appID: app.id, pushes: [try self.update("m")], idempotencyKey: "k1")
            let answer = try await intake.accept(first)
            let retry = try PushSubmission(appID: app.id, pushes: [try self.update("m")], idempotencyKey: "k1")
            #expect(try await intake.accept(retry) == answer)
            #expect(try await self.count(client) == 1)
            // Another app's key is its own.
            _ = try await intake.accept(PushSubmission(appID: other.id, pushes: [try self.update("m")], idempotencyKey: "k1"))
            #expect(try await self.count(client) == 2)
            // After 24 hours the key is new again.
            clock.advance(by: 24 * 3600 + 1)
            let later = try PushSubmission(appID: app.id, pushes: [try self.update("m")], idempotencyKey: "k1")
            #expect(try await intake.accept(later) == .accepted(operationID: later.operationID, pushIDs: later.pushIDs))
            #expect(try await self.count(client) == 3)
            // The janitor deletes keys older than a day: the other app's (this app's was claimed again).
            #expect(try await IdempotencyKeys(client: client, logger: TestDatabase.logger, now: { clock.now }).deleteExpired(budget: .seconds(10)) == 1)
            #expect(try await self.count(client, "SELECT count(*) FROM push_requests") == 1)
        }
    }

    /// Requests with the same key at once (coalesced into one batch, or racing across batches) queue one push; a
    /// refused request keeps no key, so a corrected retry is judged afresh.
    @Test func concurrentRetriesQueueOnceAndRefusalsKeepNoKey() async throws {
        try await self.withIntake { intake, _, app, _, _, client in
            let answers = try await withThrowingTaskGroup(of: PushAcceptance.self) { group in
                for _ in 0..<20 {
                    let submission = try PushSubmission(appID: app.id, pushes: [try self.update("m")], idempotencyKey: "same")
                    group.addTask { try await intake.accept(submission) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(answers.map { "\($0)" }).count == 1)
            #expect(try await self.count(client) == 1)

            let refused = try PushSubmission(appID: app.id, pushes: [try self.update("m", timestamp: 1_000_000_000)], idempotencyKey: "fix-me")
            guard case .staleTimestamp = try await intake.accept(refused) else { Issue.record("not refused"); return }
            let corrected = try PushSubmission(appID: app.id, pushes: [try self.update("m", timestamp: 1_900_000_000)], idempotencyKey: "fix-me")
            #expect(try await intake.accept(corrected) == .accepted(operationID: corrected.operationID, pushIDs: corrected.pushIDs))
            #expect(try await self.count(client) == 2)
        }
    }

    @Test func reportsAreScopedToTheAppAndPageNewestFirst() async throws {
        try await self.withIntake { intake, reports, app, other, clock, _ in
            var ids: [UUID] = []
            for _ in 0..<5 {
                let submission = try PushSubmission(appID: app.id, pushes: [try self.update("m")], idempotencyKey: nil)
                _ = try await intake.accept(submission)
                ids.append(submission.pushIDs[0])
                clock.advance(by: 1)
            }
            await #expect(throws: StoreError.notFound) { try await reports.report(ids[0], appID: other.id) }
            let first = try await reports.list(appID: app.id, limit: 2, start: nil)
            #expect(first.reports.map(\.pushID) == [ids[4], ids[3]])
            #expect(first.next == ids[2])
            let last = try await reports.list(appID: app.id, limit: 3, start: first.next)
            #expect(last.reports.map(\.pushID) == [ids[2], ids[1], ids[0]])
            #expect(last.next == nil)
            #expect(try await reports.list(appID: other.id, limit: 10, start: nil).reports.isEmpty)
        }
    }
}

/// What the intake stores is exactly what a worker claims: random audiences (to the deepest nesting accepted) and
/// content go through accept → store → claim and come back the same.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct PushRoundTripTests {
    @Test(arguments: [1, 2, 3] as [UInt64]) func acceptedPushesAreClaimedAsAccepted(seed: UInt64) async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let intake = PushIntake(client: client, logger: TestDatabase.logger, now: { Date(timeIntervalSince1970: 1_800_000_000) })
            let store = DispatchStore(client: client, logger: TestDatabase.logger)
            var random = RandomPushes(seed: seed)
            var accepted: [UUID: Push] = [:]
            for index in 0..<30 {
                let text = random.update(name: "name-\(index)")
                let push = try Push.pushes(in: try RawJSONParser.parse(text.utf8))[0]
                let submission = try PushSubmission(appID: app.id, pushes: [push], idempotencyKey: nil)
                guard case .accepted = try await intake.accept(submission) else { Issue.record("refused: \(text)"); continue }
                accepted[submission.pushIDs[0]] = push
            }
            var claimed = 0
            while let part = try await store.claim(worker: "w", now: Date(timeIntervalSince1970: 1_800_000_100), lease: .seconds(30)) {
                claimed += 1
                let push = try #require(accepted[part.pushID])
                #expect(part.audience == push.audience)
                guard case .liveActivity(let activity) = push.content else { continue }
                let body = APNsPayload(push, timestamp: 1_800_000_000).body
                #expect(String(decoding: part.body, as: UTF8.self) == body)
                #expect(part.kind == .liveActivity(.update, name: activity.name, attributesType: nil))
            }
            #expect(claimed == accepted.count)
        }
    }
}
