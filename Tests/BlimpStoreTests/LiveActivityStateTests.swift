import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// Each activity's state as the store reads it from real rows: the SDK's tracked rows, starts awaiting their token
/// (inserted as the held-push work writes them), and delivery outcomes joined to their pushes for the last update.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct LiveActivityStateTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let hour: TimeInterval = 3600

    /// A store on a fresh database with one app, its clock at `start`, and the raw client to write rows with.
    func withStore(_ body: (ChannelStore, Int64, TestClock, Database) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let clock = TestClock(Self.start)
            try await body(ChannelStore(client: client, logger: TestDatabase.logger, now: { clock.now }), app.id, clock, client)
        }
    }

    /// Channel ids in order: channel(1) < channel(2) < …
    static func channel(_ n: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))! }
    static func token(_ n: Int) -> String { String(format: "%064x", n) }
    static func at(_ offset: TimeInterval) -> Date { Self.start.addingTimeInterval(offset) }

    func insertChannels(_ count: Int, appID: Int64, _ client: Database) async throws {
        for n in 1...count {
            try await client.query("INSERT INTO channels (app_id, channel_id) VALUES (\(appID), \(Self.channel(n)))", logger: TestDatabase.logger)
        }
    }

    func track(
        _ n: Int, state: String, startedAt: Date = start, endedAt: Date? = nil, dismissAt: Date? = nil, updatedAt: Date = start,
        name: String = "match", appID: Int64, _ client: Database
    ) async throws {
        let token: String? = state == "removed" ? nil : Self.token(n)
        try await client.query(
            """
            INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms, ended_at, dismiss_at, updated_at)
            VALUES (\(appID), \(Self.channel(n)), \(name), \("a\(n)"), \(token), \(state), \(startedAt), 1, \(endedAt), \(dismissAt), \(updatedAt))
            """, logger: TestDatabase.logger)
    }

    func awaiting(_ n: Int, sentAt: Date = start, state: String = "awaiting", held: (UUID, Int64)? = nil, appID: Int64, _ client: Database) async throws {
        try await client.query(
            """
            INSERT INTO awaiting_activities (app_id, channel_id, name, start_push_id, sent_at, state, held_push_id, held_timestamp)
            VALUES (\(appID), \(Self.channel(n)), 'match', \(UUID()), \(sentAt), \(state), \(held?.0), \(held?.1))
            """, logger: TestDatabase.logger)
    }

    /// A push of the name with its APNs body (carrying `staleDate` when given); returns its id.
    func push(event: String, timestamp: Int64, staleDate: Date? = nil, appID: Int64, _ client: Database) async throws -> UUID {
        let id = UUID()
        let stale = staleDate.map { #","stale-date":\#(Int($0.timeIntervalSince1970))"# } ?? ""
        let body = #"{"aps":{"timestamp":\#(timestamp),"event":"\#(event)","content-state":{}\#(stale)}}"#
        try await client.query(
            """
            INSERT INTO pushes (app_id, push_id, operation_id, state, kind, activity_name, event, aps_timestamp, audience, payload, apns_body, priority)
            VALUES (\(appID), \(id), \(UUID()), 'done', 'live_activity', 'match', \(event), \(timestamp), '"all"', '{}', \(body), 10)
            """, logger: TestDatabase.logger)
        return id
    }

    func outcome(
        _ pushID: UUID, channel n: Int, status: Int, reason: String? = nil, priority: Int = 10, uniqueID: UUID? = nil, sentAt: Date,
        appID: Int64, _ client: Database
    ) async throws {
        try await client.query(
            """
            INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, reason, apns_id, apns_unique_id, priority, sent_at)
            VALUES (\(appID), \(pushID), \(Self.token(n)), \(Self.channel(n)), \(Int16(status)), \(reason), \(UUID()), \(uniqueID), \(Int16(priority)), \(sentAt))
            """, logger: TestDatabase.logger)
    }

    func activity(_ n: Int, _ store: ChannelStore, appID: Int64) async throws -> LiveActivityRecord {
        try #require(try await store.lookup(channelID: Self.channel(n), appID: appID)?.liveActivities.first { $0.name == "match" })
    }

    @Test func anActiveActivityShowsItsLastUpdateAndGoesStaleFromTheLastDeliveredOne() async throws {
        try await self.withStore { store, app, clock, client in
            try await self.insertChannels(1, appID: app, client)
            try await self.track(1, state: "active", appID: app, client)
            // A delivered update with a stale date, then a newer one APNs refused, without one.
            let delivered = try await self.push(event: "update", timestamp: 100, staleDate: Self.at(Self.hour), appID: app, client)
            let unique = UUID()
            try await self.outcome(delivered, channel: 1, status: 200, uniqueID: unique, sentAt: Self.at(60), appID: app, client)
            let refused = try await self.push(event: "update", timestamp: 101, appID: app, client)
            try await self.outcome(refused, channel: 1, status: 400, reason: "BadDeviceToken", priority: 5, sentAt: Self.at(120), appID: app, client)
            // An outcome from before the activity started is another activity's.
            let older = try await self.push(event: "update", timestamp: 99, appID: app, client)
            try await self.outcome(older, channel: 1, status: 200, sentAt: Self.at(-60), appID: app, client)

            clock.set(Self.at(Self.hour))
            var activity = try await self.activity(1, store, appID: app)
            #expect(activity.state == .active)
            #expect(activity.token == Self.token(1))
            #expect(activity.staleDate == Self.at(Self.hour))
            #expect(activity.priority10SendsThisHour == 1)
            let last = try #require(activity.lastUpdate)
            #expect((last.pushID, last.event, last.timestamp, last.status, last.reason, last.priority) == (refused, .update, 101, 400, .badDeviceToken, 5))
            #expect(last.sentAt == Self.at(120))

            clock.set(Self.at(Self.hour + 1))
            #expect(try await self.activity(1, store, appID: app).state == .stale)
            #expect(try await store.liveActivityCounts(named: "match", appID: app)[.stale] == 1)
            clock.set(Self.at(Self.hour + 61))
            activity = try await self.activity(1, store, appID: app)
            // The hour's priority-10 sends leave the count as the hour passes.
            #expect(activity.priority10SendsThisHour == 0)

            // The newest delivered update decides: one without a stale date makes it fresh again.
            let fresh = try await self.push(event: "update", timestamp: 102, appID: app, client)
            try await self.outcome(fresh, channel: 1, status: 200, uniqueID: unique, sentAt: Self.at(Self.hour + 62), appID: app, client)
            clock.set(Self.at(Self.hour + 63))
            activity = try await self.activity(1, store, appID: app)
            #expect(activity.state == .active)
            #expect(try await store.liveActivityCounts(named: "match", appID: app)[.active] == 1)
            #expect(activity.lastUpdate?.apnsUniqueID == unique)
            #expect(activity.priority10SendsThisHour == 1)
        }
    }

    @Test func endedByPushOrByTheDeviceThenDismissed() async throws {
        try await self.withStore { store, app, clock, client in
            try await self.insertChannels(2, appID: app, client)
            try await self.track(1, state: "ended", endedAt: Self.at(Self.hour), dismissAt: Self.at(2 * Self.hour), appID: app, client)
            try await self.track(2, state: "removed", updatedAt: Self.at(Self.hour), appID: app, client)
            clock.set(Self.at(2 * Self.hour))
            let byPush = try await self.activity(1, store, appID: app)
            #expect((byPush.state, byPush.standing.endedBy, byPush.standing.endedAt, byPush.standing.dismissAt)
                    == (.ended, .push, Self.at(Self.hour), Self.at(2 * Self.hour)))
            let byDevice = try await self.activity(2, store, appID: app)
            #expect((byDevice.state, byDevice.standing.endedBy, byDevice.token) == (.ended, .device, nil))

            clock.set(Self.at(2 * Self.hour + 1))
            #expect(try await self.activity(1, store, appID: app).state == .dismissed)
            // The janitor keeps a dismissed activity until its 12 hours.
            #expect(try await store.deleteExpiredActivities(budget: .seconds(10)) == 0)
            clock.set(Self.at(5 * Self.hour + 1))
            #expect(try await self.activity(2, store, appID: app).state == .dismissed)
        }
    }

    @Test func anAwaitingStartHasNoTokenAndShowsItsHeldPushUntilItExpires() async throws {
        try await self.withStore { store, app, clock, client in
            try await self.insertChannels(2, appID: app, client)
            let held = try await self.push(event: "update", timestamp: 200, appID: app, client)
            try await self.awaiting(1, held: (held, 200), appID: app, client)
            // A channel whose earlier activity of the name the device removed, and a start sent after it.
            try await self.track(2, state: "removed", startedAt: Self.at(-Self.hour), updatedAt: Self.at(-60), appID: app, client)
            try await self.awaiting(2, appID: app, client)

            let awaiting = try await self.activity(1, store, appID: app)
            #expect((awaiting.state, awaiting.token, awaiting.id) == (.awaitingToken, nil, nil))
            #expect(awaiting.heldPush == LiveActivityRecord.HeldPush(pushID: held, timestamp: 200))
            #expect(awaiting.standing.startedAt == Self.start)
            #expect(try await self.activity(2, store, appID: app).state == .awaitingToken)

            clock.set(Self.at(8 * Self.hour))
            #expect(try await self.activity(1, store, appID: app).state == .expired)
            try await client.query("UPDATE awaiting_activities SET state = 'expired'", logger: TestDatabase.logger)
            clock.set(Self.start)
            #expect(try await self.activity(1, store, appID: app).state == .expired)
        }
    }

    @Test func anActivityPastItsEightHoursIsExpired() async throws {
        try await self.withStore { store, app, clock, client in
            try await self.insertChannels(1, appID: app, client)
            try await self.track(1, state: "active", appID: app, client)
            clock.set(Self.at(8 * Self.hour - 1))
            #expect(try await self.activity(1, store, appID: app).state == .active)
            clock.set(Self.at(8 * Self.hour))
            #expect(try await self.activity(1, store, appID: app).state == .expired)
        }
    }

    /// The listing by name walks every state's activities in channel order, a page at a time, and counts them.
    @Test func theListingByNamePagesEveryStateAndCountsThem() async throws {
        try await self.withStore { store, app, clock, client in
            try await self.insertChannels(8, appID: app, client)
            try await self.track(1, state: "active", appID: app, client)
            try await self.track(2, state: "active", startedAt: Self.at(-9 * Self.hour), appID: app, client)
            try await self.track(3, state: "ended", endedAt: Self.start, dismissAt: Self.at(Self.hour), appID: app, client)
            try await self.track(4, state: "removed", updatedAt: Self.start, appID: app, client)
            try await self.awaiting(5, appID: app, client)
            try await self.awaiting(6, sentAt: Self.at(-9 * Self.hour), state: "expired", appID: app, client)
            try await self.track(7, state: "ended", startedAt: Self.at(-4 * Self.hour), endedAt: Self.at(-3 * Self.hour),
                                 dismissAt: Self.at(-2 * Self.hour), appID: app, client)
            // Another name on channel 8, and a tracked row past its 12 hours: neither is listed.
            try await self.track(8, state: "active", name: "other", appID: app, client)
            try await self.track(8, state: "active", startedAt: Self.at(-13 * Self.hour), appID: app, client)
            clock.set(Self.at(60))

            var listed: [ChannelActivity] = []
            var start: UUID?
            repeat {
                let page = try await store.liveActivities(named: "match", appID: app, start: start, limit: 2)
                #expect(page.activities.count <= 2)
                listed += page.activities
                start = page.next
            } while start != nil
            #expect(listed.map(\.channelID) == (1...7).map(Self.channel))
            #expect(listed.map(\.activity.state) == [.active, .expired, .ended, .ended, .awaitingToken, .expired, .dismissed])
            let counts = try await store.liveActivityCounts(named: "match", appID: app)
            #expect(counts == [.awaitingToken: 1, .active: 1, .stale: 0, .ended: 2, .dismissed: 1, .expired: 2])
        }
    }
}
