import BlimpCore
import BlimpTestSupport
import Foundation
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct ChannelStoreTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A store on a fresh database with one app, and a clock the test moves.
    func withStore(_ body: (ChannelStore, App, TestClock) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let clock = TestClock(Self.start)
            let store = ChannelStore(client: client, logger: TestDatabase.logger, now: { clock.now })
            try await body(store, app, clock)
        }
    }

    func registration(_ json: String) throws -> CheckedChannelRegistration {
        try ChannelRegistration(json: try RawJSONParser.parse(json.utf8), at: "channel").checked()
    }

    func token(_ n: Int) -> String { String(format: "%064x", n) }

    func set(_ name: String, id: String, token: Int, start: Date = start, at ms: Int64) -> LiveActivityUpdate {
        .setActivity(name: name, activityID: id, token: self.token(token), startedAt: start, actionMilliseconds: ms)
    }

    func batch(_ updates: LiveActivityUpdate..., tags: TagOperations = TagOperations()) -> CheckedChannelBatch {
        CheckedChannelBatch(tags: tags, attributes: [], liveActivities: updates)
    }

    @Test func theSamePushAddressFindsItsChannel() async throws {
        try await self.withStore { store, app, _ in
            let first = try await store.register(try self.registration(#"{"device_type": "ios", "opt_in": true, "push_address": "\#(self.token(1))", "set_tags": true, "tags": ["a"]}"#), appID: app.id)
            let again = try await store.register(try self.registration(#"{"device_type": "ios", "push_address": "\#(self.token(1).uppercased())"}"#), appID: app.id)
            #expect(first.created)
            #expect(!again.created)
            #expect(again.channelID == first.channelID)
            let channel = try #require(try await store.lookup(channelID: first.channelID, appID: app.id))
            #expect(channel.optIn)  // the second registration left it as it was
            #expect(channel.tagGroups == ["device": ["a"]])
            #expect(try await store.list(appID: app.id, start: nil, limit: 10).count == 1)
        }
    }

    /// The coalesced insert sends its rows as JSON text written by hand: whatever a field holds arrives as sent.
    @Test func fieldsNeedingEscapesArriveAsSent() async throws {
        try await self.withStore { store, app, _ in
            let tag = "quote \" backslash \\ tab \t é 🎉 \u{01}"
            let alias = "line\nbreak"
            let registration = try self.registration(
                String(decoding: try JSONSerialization.data(withJSONObject: [
                    "device_type": "ios", "push_address": self.token(7), "set_tags": true, "tags": [tag], "alias": alias,
                    "locale_language": "de", "ios": ["badge": 3, "quiettime": ["start": "22:00"]],
                ] as [String: Any]), as: UTF8.self))
            let (channelID, created) = try await store.register(registration, appID: app.id)
            #expect(created)
            let channel = try #require(try await store.lookup(channelID: channelID, appID: app.id))
            #expect(channel.tagGroups == ["device": [tag]])
            #expect(channel.alias == alias)
            #expect(channel.badge == 3)
            #expect(channel.quietTime?.start == "22:00")
            #expect(channel.quietTime.map { $0.end == nil } == true)
        }
    }

    /// Concurrent writes are coalesced into multi-row statements; each request still gets its own answer.
    @Test func concurrentRegistrationsAndTokensKeepTheirRules() async throws {
        try await self.withStore { store, app, _ in
            // Every push address registers twice at once: one channel each, created once.
            let registered = try await withThrowingTaskGroup(of: (Int, UUID, Bool).self) { group in
                for device in 0..<80 {
                    let registration = try self.registration(#"{"device_type": "ios", "push_address": "\#(self.token(device % 40))", "set_tags": true, "tags": ["t\#(device % 40)"]}"#)
                    group.addTask { let (id, created) = try await store.register(registration, appID: app.id); return (device % 40, id, created) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for address in 0..<40 {
                let answers = registered.filter { $0.0 == address }
                #expect(Set(answers.map(\.1)).count == 1)
                #expect(answers.filter(\.2).count == 1)
                #expect(try await store.lookup(channelID: answers[0].1, appID: app.id)?.tagGroups == ["device": ["t\(address)"]])
            }
            // Tokens for one activity, all at once: the newest wins, whatever the order they are written in.
            let channel = registered[0].1
            try await withThrowingTaskGroup(of: Void.self) { group in
                for step in (1...30).shuffled() {
                    group.addTask { try await store.apply(self.batch(self.set("match", id: "a1", token: step, at: Int64(step))), channelID: channel, appID: app.id) }
                }
                try await group.waitForAll()
            }
            #expect(try await store.lookup(channelID: channel, appID: app.id)?.liveActivities.map(\.token) == [self.token(30)])
            #expect(RegistrationWriter.rounds(["a", "b", "a", "a", "c", "b"]) == [[0, 1, 4], [2, 5], [3]])
        }
    }

    @Test func updatesMergeOnlyWhatTheyCarry() async throws {
        try await self.withStore { store, app, clock in
            let (id, _) = try await store.register(try self.registration(#"{"device_type": "ios", "opt_in": true, "background": true, "timezone": "Europe/Berlin", "set_tags": true, "tags": ["a", "b"]}"#), appID: app.id)
            clock.set(Self.start.addingTimeInterval(60))
            try await store.update(try self.registration(#"{"opt_in": false, "tag_changes": {"add": ["c"], "remove": ["a"]}, "ios": {"frequent_pushes_enabled": true, "badge": 3}}"#), channelID: id, appID: app.id)
            let channel = try #require(try await store.lookup(channelID: id, appID: app.id))
            #expect(!channel.optIn)
            #expect(channel.background)
            #expect(channel.timezone == "Europe/Berlin")
            #expect(channel.frequentPushesEnabled)
            #expect(channel.badge == 3)
            #expect(channel.tagGroups == ["device": ["b", "c"]])
            #expect(channel.lastRegistration == Self.start.addingTimeInterval(60))
            #expect(channel.created == Self.start)
        }
    }

    @Test func aPushAddressMovesToTheChannelThatReportsItLast() async throws {
        try await self.withStore { store, app, _ in
            let (old, _) = try await store.register(try self.registration(#"{"device_type": "ios", "push_address": "\#(self.token(1))"}"#), appID: app.id)
            let (new, _) = try await store.register(try self.registration(#"{"device_type": "ios"}"#), appID: app.id)
            try await store.update(try self.registration(#"{"push_address": "\#(self.token(1))"}"#), channelID: new, appID: app.id)
            #expect(try await store.lookup(channelID: old, appID: app.id)?.pushAddress == nil)
            #expect(try await store.lookup(channelID: new, appID: app.id)?.pushAddress == self.token(1))
        }
    }

    @Test func lastWriterWinsByActionTimestamp() async throws {
        try await self.withStore { store, app, _ in
            let (id, _) = try await store.register(try self.registration(#"{"device_type": "ios"}"#), appID: app.id)
            try await store.apply(self.batch(self.set("match", id: "a1", token: 2, at: 200)), channelID: id, appID: app.id)
            // An older entry arriving late changes nothing.
            try await store.apply(self.batch(self.set("match", id: "a1", token: 1, at: 100)), channelID: id, appID: app.id)
            #expect(try await store.lookup(channelID: id, appID: app.id)?.liveActivities.map(\.token) == [self.token(2)])
            // Rotation: a newer token for the same activity replaces the old one.
            try await store.apply(self.batch(self.set("match", id: "a1", token: 3, at: 300)), channelID: id, appID: app.id)
            #expect(try await store.lookup(channelID: id, appID: app.id)?.liveActivities.map(\.token) == [self.token(3)])
            // A removal wins over an older set that arrives after it, in the same batch or later.
            try await store.apply(
                self.batch(
                    .removeActivity(name: "match", activityID: "a1", startedAt: Self.start, actionMilliseconds: 500),
                    self.set("match", id: "a1", token: 4, at: 400)
                ),
                channelID: id, appID: app.id
            )
            // The removal stays on record: ended on the device, without its token.
            let removed = try #require(try await store.lookup(channelID: id, appID: app.id)?.liveActivities.first)
            #expect((removed.state, removed.standing.endedBy, removed.token) == (.ended, .device, nil))
        }
    }

    @Test func oneActivityPerNamePerChannel() async throws {
        try await self.withStore { store, app, _ in
            let (id, _) = try await store.register(try self.registration(#"{"device_type": "ios"}"#), appID: app.id)
            try await store.apply(
                self.batch(self.set("match", id: "a1", token: 1, at: 100), self.set("other", id: "b1", token: 9, at: 100)),
                channelID: id, appID: app.id)
            try await store.apply(self.batch(self.set("match", id: "a2", token: 2, at: 200)), channelID: id, appID: app.id)
            // Removing the replaced activity leaves its successor alone.
            try await store.apply(
                self.batch(.removeActivity(name: "match", activityID: "a1", startedAt: Self.start, actionMilliseconds: 300)),
                channelID: id, appID: app.id)
            let activities = try #require(try await store.lookup(channelID: id, appID: app.id)).liveActivities
            #expect(activities.map(\.name) == ["match", "other"])
            #expect(activities.map(\.id) == ["a2", "b1"])
            #expect(activities.allSatisfy { $0.state == .active })
        }
    }

    @Test func pushToStartTokensAreKeptPerTypeLastWriterWins() async throws {
        try await self.withStore { store, app, _ in
            let (id, _) = try await store.register(try self.registration(#"{"device_type": "ios"}"#), appID: app.id)
            try await store.apply(
                self.batch(
                    .setStartToken(attributesType: "Match", token: self.token(5), actionMilliseconds: 200),
                    .setStartToken(attributesType: "Match", token: self.token(4), actionMilliseconds: 100),
                    .setStartToken(attributesType: "Order", token: self.token(6), actionMilliseconds: 100)
                ),
                channelID: id, appID: app.id)
            #expect(try await store.lookup(channelID: id, appID: app.id)?.pushToStartTokens == ["Match": self.token(5), "Order": self.token(6)])
            try await store.apply(self.batch(.removeStartToken(attributesType: "Order", actionMilliseconds: 300)), channelID: id, appID: app.id)
            #expect(try await store.lookup(channelID: id, appID: app.id)?.pushToStartTokens == ["Match": self.token(5)])
        }
    }

    @Test func activitiesExpireAfterEightHoursAndGoAfterTwelve() async throws {
        try await self.withStore { store, app, clock in
            let (id, _) = try await store.register(try self.registration(#"{"device_type": "ios"}"#), appID: app.id)
            try await store.apply(self.batch(self.set("match", id: "a1", token: 1, at: 100)), channelID: id, appID: app.id)
            clock.set(Self.start.addingTimeInterval(8 * 3600 + 1))
            #expect(try await store.lookup(channelID: id, appID: app.id)?.liveActivities.map(\.state) == [.expired])
            #expect(try await store.deleteExpiredActivities(budget: .seconds(10)) == 0)
            clock.set(Self.start.addingTimeInterval(12 * 3600 + 1))
            #expect(try await store.lookup(channelID: id, appID: app.id)?.liveActivities == [])
            #expect(try await store.deleteExpiredActivities(budget: .seconds(10)) == 1)
        }
    }

    @Test func anotherAppsChannelIsNeverFound() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let serverKey = ServerKey.generate().key
            let (scores, _) = try await TestApps.create(named: "Scores", in: client, serverKey: serverKey)
            let (orders, _) = try await TestApps.create(named: "Orders", in: client, serverKey: serverKey)
            let store = ChannelStore(client: client, logger: TestDatabase.logger)
            let (id, _) = try await store.register(try self.registration(#"{"device_type": "ios", "push_address": "\#(self.token(1))"}"#), appID: scores.id)
            #expect(try await store.lookup(channelID: id, appID: orders.id) == nil)
            #expect(try await store.list(appID: orders.id, start: nil, limit: 10) == [])
            await #expect(throws: StoreError.notFound) {
                try await store.apply(self.batch(self.set("match", id: "a1", token: 1, at: 1)), channelID: id, appID: orders.id)
            }
            await #expect(throws: StoreError.notFound) {
                try await store.update(try self.registration(#"{"opt_in": true}"#), channelID: id, appID: orders.id)
            }
            #expect(try await store.changeTags(TagOperations(add: ["g": ["t"]]), channelIDs: [id], appID: orders.id) == 0)
            try await store.uninstall(channelIDs: [id], appID: orders.id)
            // The same push address in another app is another channel.
            let (other, created) = try await store.register(try self.registration(#"{"device_type": "ios", "push_address": "\#(self.token(1))"}"#), appID: orders.id)
            #expect(created && other != id)
            #expect(try await store.lookup(channelID: id, appID: scores.id)?.installed == true)
        }
    }

    @Test func uninstallForgetsTokensAndARegistrationReinstalls() async throws {
        try await self.withStore { store, app, _ in
            let (id, _) = try await store.register(try self.registration(#"{"device_type": "ios", "opt_in": true, "push_address": "\#(self.token(1))"}"#), appID: app.id)
            try await store.apply(
                self.batch(self.set("match", id: "a1", token: 2, at: 1), .setStartToken(attributesType: "Match", token: self.token(3), actionMilliseconds: 1)),
                channelID: id, appID: app.id)
            try await store.uninstall(channelIDs: [id], appID: app.id)
            let uninstalled = try #require(try await store.lookup(channelID: id, appID: app.id))
            #expect(!uninstalled.installed && !uninstalled.optIn)
            #expect(uninstalled.liveActivities == [] && uninstalled.pushToStartTokens == [:])
            let (again, created) = try await store.register(try self.registration(#"{"device_type": "ios", "opt_in": true, "push_address": "\#(self.token(1))"}"#), appID: app.id)
            #expect(again == id && !created)
            #expect(try await store.lookup(channelID: id, appID: app.id)?.installed == true)
        }
    }

    @Test func namedUsersLinkChannelsAndCarryTags() async throws {
        try await self.withStore { store, app, _ in
            let users = NamedUserStore(channels: store)
            let (a, _) = try await store.register(try self.registration(#"{"device_type": "ios"}"#), appID: app.id)
            let (b, _) = try await store.register(try self.registration(#"{"device_type": "ios"}"#), appID: app.id)
            try await users.associate(channelID: a, namedUserID: "user-1", appID: app.id)
            try await users.associate(channelID: b, namedUserID: "user-1", appID: app.id)
            try await users.changeTags(TagOperations(add: ["crm": ["gold"]]), namedUserIDs: ["user-1", "user-2"], appID: app.id)
            let user = try #require(try await users.lookup(namedUserID: "user-1", appID: app.id))
            #expect(Set(user.channels.map(\.channelID)) == [a, b])
            #expect(user.tags == ["crm": ["gold"]])
            #expect(try await users.list(appID: app.id, start: nil, limit: 10).records.map(\.namedUserID) == ["user-1", "user-2"])
            try await users.disassociate(channelID: b, namedUserID: "user-1", appID: app.id)
            #expect(try await users.lookup(namedUserID: "user-1", appID: app.id)?.channels.map(\.channelID) == [a])
            try await users.uninstall(namedUserIDs: ["user-1"], appID: app.id)
            #expect(try await users.lookup(namedUserID: "user-1", appID: app.id) == nil)
            #expect(try await store.lookup(channelID: a, appID: app.id)?.installed == false)
            await #expect(throws: StoreError.notFound) {
                try await users.associate(channelID: UUID(), namedUserID: "user-3", appID: app.id)
            }
            #expect(try await users.lookup(namedUserID: "user-3", appID: app.id) == nil)
        }
    }
}
