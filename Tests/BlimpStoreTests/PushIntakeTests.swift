import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct PushIntakeTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// An intake and reports on a fresh database with two apps, and a clock the test moves.
    func withIntake(_ body: (PushIntake, PushReports, App, App, TestClock, Database) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let key = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: key)
            let (other, _) = try await TestApps.create(named: "Other", in: client, serverKey: key)
            let clock = TestClock(Self.start)
            let intake = PushIntake(client: client, logger: TestDatabase.logger, now: { clock.now })
            try await body(intake, PushReports(client: client, logger: TestDatabase.logger), app, other, clock, client)
        }
    }

    static let second = Int64(Self.start.timeIntervalSince1970)

    func update(_ name: String, timestamp: Int64? = nil, state: String = #"{"home": 1}"#, audience: String = #"{"tag": "fans"}"#) throws -> Push {
        let stamp = timestamp.map { #", "timestamp": \#($0)"# } ?? ""
        return try Self.push(#"{"event": "update", "name": "\#(name)", "content_state": \#(state)\#(stamp)}"#, audience: audience)
    }

    func start(_ name: String, type: String) throws -> Push {
        try Self.push(
            #"{"event": "start", "name": "\#(name)", "attributes_type": "\#(type)", "attributes": {"home": "A"}, "content_state": {}, "alert": {"title": "t", "body": "b"}}"#)
    }

    static func push(_ liveActivity: String, audience: String = #"{"tag": "fans"}"#) throws -> Push {
        let body = #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": \#(liveActivity)}}}"#
        return try Push.pushes(in: try RawJSONParser.parse(body.utf8))[0]
    }

    /// Accepts `pushes` as one request of `appID`; returns their ids.
    func accept(_ intake: PushIntake, _ appID: Int64, _ pushes: [Push]) async throws -> [UUID] {
        let submission = try PushSubmission(appID: appID, pushes: pushes, idempotencyKey: nil)
        #expect(try await intake.accept(submission) == .accepted(operationID: submission.operationID, pushIDs: submission.pushIDs))
        return submission.pushIDs
    }

    /// The stamps of the pushes `ids`, in their order.
    func stamps(_ client: Database, _ ids: [UUID]) async throws -> [Int64] {
        let rows = try await client.query("SELECT push_id, aps_timestamp FROM pushes WHERE push_id = ANY(\(ids))", logger: TestDatabase.logger)
        let stamps = Dictionary(uniqueKeysWithValues: try await rows.decode((UUID, Int64).self).array())
        return ids.compactMap { stamps[$0] }
    }

    func count(_ client: Database, _ sql: String = "SELECT count(*) FROM pushes") async throws -> Int {
        try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestDatabase.logger).decode(Int.self).array()[0]
    }

    func bodies(_ client: Database) async throws -> [String] {
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

    /// Without a timestamp, pushes of a name to one audience as written get increasing stamps, even within one second;
    /// to other audiences, the acceptance second. A caller's timestamp is kept as given, older or not.
    @Test func stampsMoveForwardPerAudienceAsWritten() async throws {
        try await self.withIntake { intake, _, app, other, clock, client in
            let fans = #"{"tag": "fans", "group": "teams"}"#
            var ids = try await self.accept(intake, app.id, [try self.update("m", audience: fans), try self.update("m", audience: fans)])
            // The same audience with its keys in another order is the same JSON as stored.
            ids += try await self.accept(intake, app.id, [try self.update("m", audience: #"{"group": "teams", "tag": "fans"}"#)])
            // Other audiences of the name, and the same audience in another app, start from the clock.
            for audience in [#"{"ios_channel": "\#(UUID())"}"#, #"{"ios_channel": "\#(UUID())"}"#, #"{"tag": "fans"}"#] {
                ids += try await self.accept(intake, app.id, [try self.update("m", audience: audience)])
            }
            ids += try await self.accept(intake, other.id, [try self.update("m", audience: fans)])
            #expect(try await self.stamps(client, ids) == [0, 1, 2, 0, 0, 0, 0].map { Self.second + $0 })

            // A caller's timestamp, older than the audience's last: kept; the next stamp follows the newest.
            clock.advance(by: 1)
            var later = try await self.accept(intake, app.id, [try self.update("m", timestamp: 1_000_000_000, audience: fans)])
            later += try await self.accept(intake, app.id, [try self.update("m", audience: fans)])
            later += try await self.accept(intake, app.id, [try self.update("m", timestamp: Self.second + 30, audience: fans), try self.update("m", audience: fans)])
            #expect(try await self.stamps(client, later) == [1_000_000_000, Self.second + 3, Self.second + 30, Self.second + 31])
        }
    }

    /// Flushes racing on one audience (separate intakes, so separate transactions) take turns: every push gets its own
    /// stamp, one after another.
    @Test func concurrentFlushesToOneAudienceGetDistinctStamps() async throws {
        try await self.withIntake { _, _, app, _, clock, client in
            let intakes = (0..<6).map { _ in PushIntake(client: client, logger: TestDatabase.logger, now: { clock.now }) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for intake in intakes {
                    group.addTask {
                        for _ in 0..<5 { _ = try await self.accept(intake, app.id, [try self.update("m")]) }
                    }
                }
                try await group.waitForAll()
            }
            let stamps = try await client.query("SELECT aps_timestamp FROM pushes ORDER BY aps_timestamp", logger: TestDatabase.logger)
            #expect(try await stamps.decode(Int64.self).array() == (0..<30).map { Self.second + $0 })
        }
    }

    /// A database the previous release left, where a busy name's stamps ran an hour ahead of the clock: the first push
    /// of that name after the upgrade, to any audience, is stamped after the name's last stamp, which devices show.
    @Test func aNameThatRanAheadBeforeTheUpgradeIsAFloor() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            try await Schema.apply(to: client, through: 27, logger: TestDatabase.logger)
            let (app, _) = try await TestApps.create(named: "Orders", in: client, serverKey: ServerKey.generate().key)
            let ahead = Self.second + 3600
            try await client.query(
                "INSERT INTO activity_names VALUES (\(app.id), 'delivery', \(ahead), \(UUID()), NULL)", logger: TestDatabase.logger)
            try await Schema.apply(to: client, logger: TestDatabase.logger)

            let intake = PushIntake(client: client, logger: TestDatabase.logger, now: { Self.start })
            let first = #"{"ios_channel": "\#(UUID())"}"#
            var ids: [UUID] = []
            for audience in [first, #"{"ios_channel": "\#(UUID())"}"#, first] {
                ids += try await self.accept(intake, app.id, [try self.update("delivery", audience: audience)])
            }
            #expect(try await self.stamps(client, ids) == [ahead + 1, ahead + 1, ahead + 2])
            // The floor stays where the previous release left it.
            #expect(try await self.count(client, "SELECT last_timestamp - \(ahead) FROM activity_names") == 0)
        }
    }

    /// A name's first push lists it (floor 0, no last push) with its start's type; a start as another type changes the
    /// type. A push that changes nothing of its name does not wait on the name's row: another transaction locking it
    /// holds up no update of it.
    @Test func aNameIsListedOnceAndItsRowHoldsUpNoPush() async throws {
        try await self.withIntake { intake, _, app, _, _, client in
            func name() async throws -> [String?] {
                try await client.query(
                    "SELECT attributes_type FROM activity_names WHERE app_id = \(app.id) AND last_timestamp = 0 AND last_push_id IS NULL",
                    logger: TestDatabase.logger
                ).decode(String?.self).array()
            }
            _ = try await self.accept(intake, app.id, [try self.update("m")])
            #expect(try await name() == [nil])
            _ = try await self.accept(intake, app.id, [try self.start("m", type: "Match"), try self.update("m")])
            #expect(try await name() == ["Match"])

            let locked = Mutex<Bool?>(nil)
            let holder = Task {
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    try await connection.query("SELECT 1 FROM activity_names WHERE name = 'm' FOR UPDATE", logger: TestDatabase.logger)
                    locked.withLock { $0 = true }
                    let deadline = ContinuousClock.now + .seconds(20)
                    while locked.withLock({ $0 == true }) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                }
            }
            while locked.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(20)) }
            let batch = [try self.update("m"), try self.start("m", type: "Match"), try self.update("m", audience: #"{"tag": "others"}"#)]
            _ = try await self.accept(intake, app.id, batch)
            #expect(locked.withLock { $0 } == true, "the push waited for the name's row")
            locked.withLock { $0 = false }
            try await holder.value

            _ = try await self.accept(intake, app.id, [try self.start("m", type: "Cup")])
            #expect(try await name() == ["Cup"])
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

    /// Requests with the same key at once (coalesced into one batch, or racing across batches) queue one push.
    @Test func concurrentRetriesQueueOnce() async throws {
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
            while let part = try await store.claim(worker: "w", now: Date(timeIntervalSince1970: 1_800_000_100), lease: .seconds(30)).first {
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
