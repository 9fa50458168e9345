import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct ConsoleStoreTests {
    /// The janitor's refresh counts each app's channels and each name's active, ended and expired activities (active
    /// but started over 8 hours ago), app by app; a new app's first count and a later refresh agree.
    @Test func rollupsCountChannelsAndActivitiesPerApp() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let now = Date()
            let serverKey = ServerKey.generate().key
            let scores = try await TestApps.create(named: "Scores", in: client, serverKey: serverKey).app
            let orders = try await TestApps.create(named: "Orders", in: client, serverKey: serverKey).app
            // Scores: 6 channels (4 opted in) tracking "final": 3 active, 1 expired, 2 ended; Orders: 2 channels, "final" active.
            for (app, channels, optedIn) in [(scores.id, 6, 4), (orders.id, 2, 0)] {
                try await client.query(
                    """
                    INSERT INTO channels (app_id, channel_id, opt_in)
                    SELECT \(app), gen_random_uuid(), i <= \(optedIn) FROM generate_series(1, \(channels)) i
                    """,
                    logger: TestDatabase.logger)
            }
            try await client.query(
                """
                INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
                SELECT app_id, channel_id, 'final', 'a', repeat('ab', 32),
                       CASE WHEN app_id = \(scores.id) AND n > 4 THEN 'ended' ELSE 'active' END,
                       CASE WHEN app_id = \(scores.id) AND n = 4 THEN \(now) - interval '9 hours' ELSE \(now) END, 1
                FROM (SELECT app_id, channel_id, row_number() OVER (PARTITION BY app_id ORDER BY channel_id) AS n FROM channels) c
                """,
                logger: TestDatabase.logger)
            let store = ConsoleStore(client: client, logger: TestDatabase.logger)

            // Before any refresh, the first look counts the app.
            let first = try await store.rollup(appID: scores.id, now: now)
            #expect((first.channels, first.optedIn) == (6, 4))
            #expect(try await store.refreshRollups(now: now) == 2)
            #expect(try await store.refreshRollups(now: now) == 2)
            let again = try await store.rollup(appID: scores.id, now: now)
            #expect((again.channels, again.optedIn) == (6, 4))
            let final = try #require(try await store.activityNames(appID: scores.id, after: nil, limit: 10).first)
            #expect(final.name == "final")
            #expect((final.active, final.ended, final.expired) == (3, 2, 1))
            let other = try #require(try await store.activityNames(appID: orders.id, after: nil, limit: 10).first)
            #expect((other.active, other.ended, other.expired) == (2, 0, 0))
        }
    }

    /// A name shared by many activities (one per user) lists the newest push across them, whatever its audience, and a
    /// name only pushed to is listed with it.
    @Test func aSharedNameListsItsNewestPushAcrossItsActivities() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let app = try await TestApps.create(named: "Orders", in: client, serverKey: ServerKey.generate().key).app
            let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
            let intake = PushIntake(client: client, logger: TestDatabase.logger, now: { clock.now })
            var newest: [UUID] = []
            for event in ["update", "end", "update"] {
                let body = #"""
                    {"audience": {"ios_channel": "\#(UUID())"}, "device_types": ["ios"],
                     "notification": {"ios": {"live_activity": {"event": "\#(event)", "name": "delivery", "content_state": {"eta": 5}}}}}
                    """#
                let submission = try PushSubmission(appID: app.id, pushes: Push.pushes(in: try RawJSONParser.parse(body.utf8)), idempotencyKey: nil)
                _ = try await intake.accept(submission)
                newest = submission.pushIDs
                clock.advance(by: 1)
            }
            let store = ConsoleStore(client: client, logger: TestDatabase.logger)
            let names = try await store.activityNames(appID: app.id, after: nil, limit: 10)
            #expect(names.map(\.name) == ["delivery"])
            #expect(names.first?.lastPushID == newest.first)
            #expect(names.first?.lastPushEvent == .update)
            #expect(names.first?.lastPushState == .queued)
            #expect(names.first?.lastPushAt == Date(timeIntervalSince1970: 1_800_000_002))
        }
    }
}
