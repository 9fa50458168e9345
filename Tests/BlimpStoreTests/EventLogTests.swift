import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// The event log: events written with the facts they report (the intake's `PUSH_BODY`, the outcomes' `SEND` and
/// `SEND_REJECTED`), read in offset order, never past a transaction that can still commit an earlier offset.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct EventLogTests {
    static let logger = TestDatabase.logger

    func types(_ events: [StreamedEvent]) -> [String] { events.map(\.type.rawValue) }

    /// The app's events once `count` are readable: transactions of other databases on the server (other suites) hold
    /// the horizon back a moment.
    func events(_ log: EventLog, _ appID: Int64, count: Int) async throws -> [StreamedEvent] {
        var events = try await log.events(appID: appID, after: .start, limit: 10)
        let deadline = ContinuousClock.now + .seconds(30)
        while events.count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            events = try await log.events(appID: appID, after: .start, limit: 10)
        }
        return events
    }

    @Test func aPushesBodyAndItsSendsAreReadInOrderWithTheirBodies() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let key = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: key)
            let (other, _) = try await TestApps.create(named: "Other", in: client, serverKey: key)
            let log = EventLog(client: client, logger: Self.logger)
            let intake = PushIntake(client: client, logger: Self.logger)
            let push = try PushIntakeTests.push(#"{"event": "update", "name": "match", "content_state": {"home": 1}}"#)
            let submission = try PushSubmission(appID: app.id, pushes: [push], idempotencyKey: nil)
            _ = try await intake.accept(submission)
            let pushID = submission.pushIDs[0]
            let (accepted, refused) = (UUID(), UUID())
            let target = { (channel: UUID) in
                DispatchTarget(
                    channelID: channel, token: DeviceToken(String(repeating: "ab", count: 32))!, frequentPushes: false, recentPriority10: 0,
                    alreadyActive: false, awaitingToken: false, recentStarts: 0, newerSent: false)
            }
            try await client.withConnection { connection in
                try await DispatchStore.insert([
                    (pushID, .init(target: target(accepted), status: 200, reason: nil, apnsID: nil, priority: .conservingPower)),
                    (pushID, .init(target: target(refused), status: 410, reason: .unregistered, apnsID: nil, priority: .conservingPower)),
                ], appID: app.id, now: Date(), on: connection, logger: Self.logger)
            }

            let events = try await self.events(log, app.id, count: 3)
            #expect(self.types(events) == ["PUSH_BODY", "SEND", "SEND_REJECTED"])
            #expect(events.map(\.pushID) == [pushID, pushID, pushID])
            #expect(events.map(\.channelID) == [nil, accepted, refused])
            #expect(events.map(\.offset) == events.map(\.offset).sorted() && Set(events.map(\.offset)).count == 3)
            let body = try #require(events.first?.body)
            #expect(body["resource"] == .string("PUSH") && body["trimmed"] == .bool(false))
            guard case .string(let payload)? = body["payload"], let decoded = Data(base64Encoded: payload) else {
                Issue.record("no payload: \(body.text)")
                return
            }
            let request = try RawJSONParser.parse(Array(decoded))
            #expect(request["notification"]?["ios"]?["live_activity"]?["name"] == .string("match"), "\(request.text)")
            #expect(events[1].body.text == #"{"push_id":"\#(pushID.lowercaseString)","alerting":false}"#)
            #expect(events[2].body.text == #"{"push_id":"\#(pushID.lowercaseString)","reason":"Unregistered","status":410}"#)
            // Ids are stable: a second read gives the same.
            #expect(try await log.events(appID: app.id, after: .start, limit: 10).map(\.id) == events.map(\.id))
            // After an offset, the rest; another app's stream has none of them.
            #expect(self.types(try await log.events(appID: app.id, after: events[0].offset, limit: 10)) == ["SEND", "SEND_REJECTED"])
            #expect(try await log.events(appID: app.id, after: events[0].offset, limit: 1).map(\.offset) == [events[1].offset])
            #expect(try await log.events(appID: other.id, after: .start, limit: 10).isEmpty)
            // The latest offset is past every committed event.
            #expect(try await log.events(appID: app.id, after: EventLog.offset(for: .latest, at: try await log.horizon()), limit: 10).isEmpty)
        }
    }

    /// A transaction that began writing first commits its event last: the event committed meanwhile is not read until
    /// it does, and then both are read, the first transaction's first. Read by id, the reader would have passed it.
    @Test func anEventWaitsForEveryTransactionThatCouldCommitBeforeIt() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let log = EventLog(client: client, logger: Self.logger)
            let insert: (String) -> PostgresQuery = { type in
                "INSERT INTO events (app_id, type, occurred_at) VALUES (\(app.id), \(type), now())"
            }
            // A stream opened meanwhile at the latest offset gets both: neither had committed when it opened.
            let latest = try await client.withTransaction(logger: Self.logger) { first in
                _ = try await first.query("SELECT pg_current_xact_id()", logger: Self.logger)
                try await client.query(insert("SEND"), logger: Self.logger)
                #expect(try await log.events(appID: app.id, after: .start, limit: 10).isEmpty)
                let latest = EventLog.offset(for: .latest, at: try await log.horizon())
                try await first.query(insert("PUSH_BODY"), logger: Self.logger)
                #expect(try await log.events(appID: app.id, after: .start, limit: 10).isEmpty)
                return latest
            }
            let events = try await self.events(log, app.id, count: 2)
            #expect(self.types(events) == ["PUSH_BODY", "SEND"])
            #expect(try await log.events(appID: app.id, after: latest, limit: 10).map(\.offset) == events.map(\.offset))
            let ids = try await client.query("SELECT id FROM events ORDER BY id", logger: Self.logger).decode(Int64.self).array()
            #expect(events.map(\.offset.id) == ids.reversed())
        }
    }

    /// The janitor deletes events older than each app's cutoff, in offset order, and keeps the last offset it deleted:
    /// what a stream resuming from an earlier offset would have missed.
    @Test func eventsPastTheirRetentionAreDeletedAndTheLastDeletedOffsetIsKept() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let key = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: key)
            let (own, _) = try await TestApps.create(named: "Own", in: client, serverKey: key)
            let log = EventLog(client: client, logger: Self.logger)
            let now = Date()
            // Per app, five events two days old, then three of an hour ago, each in its own transaction.
            for appID in [app.id, own.id] {
                for age in Array(repeating: 2 * 86400.0, count: 5) + Array(repeating: 3600.0, count: 3) {
                    try await client.query(
                        "INSERT INTO events (app_id, type, occurred_at) VALUES (\(appID), 'SEND', \(now.addingTimeInterval(-age)))",
                        logger: Self.logger)
                }
            }
            let before = try await self.events(log, app.id, count: 8)
            // The other app's, written after, readable too before anything is deleted (the horizon only moves on).
            #expect(try await self.events(log, own.id, count: 8).count == 8)
            #expect(try await log.trimmed(appID: app.id) == nil)
            // A day for the deployment; the other app keeps three days, so nothing of its goes. Batches of two.
            let deleted = try await log.deleteOld(
                defaultCutoff: now.addingTimeInterval(-86400), cutoffs: [own.id: now.addingTimeInterval(-3 * 86400)], budget: .seconds(30),
                batchSize: 2)
            #expect(deleted == 5)
            #expect(try await log.events(appID: app.id, after: .start, limit: 10).map(\.offset) == before.suffix(3).map(\.offset))
            #expect(try await log.trimmed(appID: app.id) == before[4].offset)
            #expect(try await log.events(appID: own.id, after: .start, limit: 10).count == 8)
            #expect(try await log.trimmed(appID: own.id) == nil)
            // Nothing more to delete: the mark stays.
            #expect(try await log.deleteOld(defaultCutoff: now.addingTimeInterval(-86400), cutoffs: [:], budget: .seconds(30)) == 5)
            #expect(try await log.trimmed(appID: own.id) != nil)
            #expect(try await log.deleteOld(defaultCutoff: now.addingTimeInterval(-86400), cutoffs: [:], budget: .seconds(30)) == 0)
            #expect(try await log.trimmed(appID: app.id) == before[4].offset)
        }
    }

    /// An app that turned SEND events off keeps its rejected sends' events.
    @Test func anAppWithoutSendEventsKeepsItsRejections() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            try await AppStore(client: client, logger: Self.logger).setSendEvents(false, appKey: app.appKey)
            let target = DispatchTarget(
                channelID: UUID(), token: DeviceToken(String(repeating: "cd", count: 32))!, frequentPushes: false, recentPriority10: 0,
                alreadyActive: false, awaitingToken: false, recentStarts: 0, newerSent: false)
            try await client.withConnection { connection in
                try await DispatchStore.insert([
                    (UUID(), .init(target: target, status: 200, reason: nil, apnsID: nil, priority: .immediate)),
                    (UUID(), .init(target: target, status: 0, reason: nil, apnsID: nil, priority: .immediate)),
                ], appID: app.id, now: Date(), on: connection, logger: Self.logger)
            }
            let events = try await self.events(EventLog(client: client, logger: Self.logger), app.id, count: 1)
            #expect(self.types(events) == ["SEND_REJECTED"])
            #expect(events.first?.body["status"] == .integer(0))
        }
    }

    /// A 410 for the channel's device token is an uninstall; for another of its tokens (an activity's), it is not.
    @Test func a410ForTheChannelsDeviceTokenIsAnUninstall() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let (channel, device, activity) = (UUID(), String(repeating: "ab", count: 32), String(repeating: "ef", count: 32))
            try await client.query(
                "INSERT INTO channels (app_id, channel_id, push_address) VALUES (\(app.id), \(channel), \(device))", logger: Self.logger)
            let gone = { (token: String) -> DispatchStore.Outcome in
                let target = DispatchTarget(
                    channelID: channel, token: DeviceToken(token)!, frequentPushes: false, recentPriority10: 0, alreadyActive: false,
                    awaitingToken: false, recentStarts: 0, newerSent: false)
                return .init(target: target, status: 410, reason: .unregistered, apnsID: nil, priority: .immediate)
            }
            let pushID = UUID()
            try await client.withConnection { connection in
                try await DispatchStore.insert(
                    [(pushID, gone(activity)), (pushID, gone(device))], appID: app.id, now: Date(), on: connection, logger: Self.logger)
            }
            let events = try await self.events(EventLog(client: client, logger: Self.logger), app.id, count: 3)
            #expect(self.types(events) == ["SEND_REJECTED", "SEND_REJECTED", "UNINSTALL"])
            #expect(events.last?.channelID == channel)
            #expect(events.last?.body.text == #"{"push_id":"\#(pushID.lowercaseString)","decay":false}"#)
        }
    }

    /// A push cancelled while it waits is finished, with its event.
    @Test func aCancelledPushIsAFinishedEvent() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let push = try PushIntakeTests.push(#"{"event": "update", "name": "match", "content_state": {"home": 1}}"#)
            let submission = try PushSubmission(appID: app.id, pushes: [push], idempotencyKey: nil)
            _ = try await PushIntake(client: client, logger: Self.logger).accept(submission)
            let control = PushControl(client: client, logger: Self.logger)
            #expect(try await control.cancel(submission.pushIDs[0], appID: app.id, by: .commandLine) == .changed)
            let events = try await self.events(EventLog(client: client, logger: Self.logger), app.id, count: 2)
            #expect(self.types(events) == ["PUSH_BODY", "PUSH_FINISHED"])
            #expect(events.last?.pushID == submission.pushIDs[0])
            #expect(events.last?.body["state"] == .string("cancelled") && events.last?.body["failure_reason"] == .string("cancelled"))
        }
    }
}
