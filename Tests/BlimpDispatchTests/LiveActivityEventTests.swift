import BlimpCore
import BlimpSimulator
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// Each Live Activity state change is an event of the app's stream, written with the change: a start awaiting its
/// token, the token's report (active), an end by push or on the device, and the states time brings (dismissed,
/// expired), which the janitor reports once their time passed.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct LiveActivityEventTests {
    /// One Live Activity event as stored: its type, channel, push and body.
    struct Event: Equatable, CustomStringConvertible {
        var type: String
        var channelID: UUID?
        var pushID: UUID?
        var body: [String: String]

        var description: String { "\(self.type) \(self.channelID?.lowercaseString ?? "-") \(self.pushID?.lowercaseString ?? "-") \(self.body)" }
    }

    /// The app's Live Activity events after the first `skipping`, in offset order, each body's members as text.
    static func events(_ harness: DispatchHarness, skipping: Int = 0) async throws -> [Event] {
        let rows = try await harness.database.query(
            """
            SELECT type, channel_id, push_id, body::text FROM events
            WHERE app_id = \(harness.app.id) AND type LIKE 'LIVE_ACTIVITY_%' ORDER BY xid, id OFFSET \(skipping)
            """,
            logger: TestDatabase.logger
        ).decode((String, UUID?, UUID?, String).self).collect()
        return try rows.map { type, channel, push, body in
            guard case .object(let members) = try RawJSONParser.parse(Array(body.utf8)) else { throw Unreadable() }
            var strings: [String: String] = [:]
            for member in members {
                switch member.value {
                case .string(let text): strings[member.key] = text
                case .null: strings[member.key] = "null"
                default: strings[member.key] = member.value.text
                }
            }
            return Event(type: type, channelID: channel, pushID: push, body: strings)
        }
    }

    struct Unreadable: Error {}

    @Test func aStartedActivitysLifeIsOnTheStreamOnce() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(2, name: nil, startToken: "MatchAttributes")
            let start = try await harness.push(HeldPushTests.start)
            _ = try await harness.deliver([start])
            let awaiting = try await Self.events(harness)
            #expect(awaiting.sorted { $0.description < $1.description } == devices.map {
                Event(type: "LIVE_ACTIVITY_AWAITING_TOKEN", channelID: $0.channelID, pushID: start, body: ["name": "match-5", "activity_id": "null"])
            }.sorted { $0.description < $1.description }, "\(awaiting)")

            // The first device reports its activity's token, and later a new one: active once.
            let activityID = UUID().uuidString
            let startedAt = Date(timeIntervalSince1970: harness.clock.now.timeIntervalSince1970.rounded(.down))
            for milliseconds in [1_000, 2_000] as [Int64] {
                try await harness.channels.apply(
                    CheckedChannelBatch(
                        tags: TagOperations(), attributes: [],
                        liveActivities: [.setActivity(name: "match-5", activityID: activityID, token: SimulatorHarness.randomToken(),
                                                      startedAt: startedAt, actionMilliseconds: milliseconds)]),
                    channelID: devices[0].channelID, appID: harness.app.id)
            }
            #expect(try await Self.events(harness, skipping: 2) == [
                Event(type: "LIVE_ACTIVITY_ACTIVE", channelID: devices[0].channelID, pushID: nil,
                      body: ["name": "match-5", "activity_id": activityID, "started_at": StreamedEvent.format(startedAt)])
            ])

            // An end with a dismissal date an hour on: ended by push, then dismissed once the janitor sees it passed.
            let dismissal = Int(harness.clock.now.timeIntervalSince1970) + 3600
            let end = try await harness.push(DispatchHarness.liveActivity("end", "match-5", #", "content_state": {"home": 3}, "dismissal_date": \#(dismissal)"#))
            _ = try await harness.deliver([end])
            let dismissedAt = StreamedEvent.format(Date(timeIntervalSince1970: TimeInterval(dismissal)))
            #expect(try await Self.events(harness, skipping: 3) == [
                Event(type: "LIVE_ACTIVITY_ENDED", channelID: devices[0].channelID, pushID: end,
                      body: ["name": "match-5", "activity_id": activityID, "ended_by": "push", "dismissal_date": dismissedAt])
            ])
            #expect(try await harness.channels.reportTimedActivityStates(budget: .seconds(10)) == 0)
            harness.clock.advance(by: 3601)
            #expect(try await harness.channels.reportTimedActivityStates(budget: .seconds(10)) == 1)
            #expect(try await Self.events(harness, skipping: 4) == [
                Event(type: "LIVE_ACTIVITY_DISMISSED", channelID: devices[0].channelID, pushID: nil, body: ["name": "match-5", "activity_id": activityID])
            ])

            // The second device's token never comes: its start expires at its 8 hours.
            harness.clock.advance(by: LiveActivityLifetime.updatable)
            let store = DispatchStore(client: harness.database, logger: TestDatabase.logger)
            #expect(try await store.expireAwaitingActivities(now: harness.clock.now, budget: .seconds(10)) == 1)
            #expect(try await harness.channels.reportTimedActivityStates(budget: .seconds(10)) == 0)
            #expect(try await Self.events(harness, skipping: 5) == [
                Event(type: "LIVE_ACTIVITY_EXPIRED", channelID: devices[1].channelID, pushID: start, body: ["name": "match-5", "activity_id": "null"])
            ])
            let expiredAt = try await harness.database.query(
                "SELECT occurred_at FROM events WHERE type = 'LIVE_ACTIVITY_EXPIRED'", logger: TestDatabase.logger
            ).decode(Date.self).collect()
            let sent = try #require(try await harness.report(start).startedAt)
            #expect(expiredAt.map { $0.timeIntervalSince(sent) } == [LiveActivityLifetime.updatable], "\(expiredAt), sent \(sent)")
        }
    }

    /// An activity the device ends is ended by the device, and dismissed 4 hours later; one left alone expires at its
    /// 8 hours, when iOS ends it.
    @Test func anActivityEndedOnTheDeviceOrLeftAloneToExpire() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(2, name: "order-9")
            #expect(try await Self.events(harness).map(\.type) == ["LIVE_ACTIVITY_ACTIVE", "LIVE_ACTIVITY_ACTIVE"])
            let activityIDs = try await harness.database.query(
                "SELECT activity_id FROM live_activities WHERE channel_id = \(devices[0].channelID)", logger: TestDatabase.logger
            ).decode(String.self).collect()
            let activityID = try #require(activityIDs.first)
            let removedAt = harness.clock.now
            try await harness.channels.apply(
                CheckedChannelBatch(
                    tags: TagOperations(), attributes: [],
                    liveActivities: [.removeActivity(name: "order-9", activityID: activityID, startedAt: removedAt, actionMilliseconds: 2)]),
                channelID: devices[0].channelID, appID: harness.app.id)
            let dismissal = removedAt.addingTimeInterval(LiveActivityLifetime.dismissedAfterEnd)
            #expect(try await Self.events(harness, skipping: 2) == [
                Event(type: "LIVE_ACTIVITY_ENDED", channelID: devices[0].channelID, pushID: nil,
                      body: ["name": "order-9", "activity_id": activityID, "ended_by": "device", "dismissal_date": StreamedEvent.format(dismissal)])
            ])

            harness.clock.advance(by: LiveActivityLifetime.dismissedAfterEnd + 1)
            #expect(try await harness.channels.reportTimedActivityStates(budget: .seconds(10)) == 1)
            harness.clock.advance(by: LiveActivityLifetime.updatable - LiveActivityLifetime.dismissedAfterEnd)
            #expect(try await harness.channels.reportTimedActivityStates(budget: .seconds(10)) == 1)
            #expect(try await harness.channels.reportTimedActivityStates(budget: .seconds(10)) == 0)
            let later = try await Self.events(harness, skipping: 3)
            #expect(later.map(\.type) == ["LIVE_ACTIVITY_DISMISSED", "LIVE_ACTIVITY_EXPIRED"], "\(later)")
            #expect(later.map(\.channelID) == [devices[0].channelID, devices[1].channelID])
        }
    }
}
