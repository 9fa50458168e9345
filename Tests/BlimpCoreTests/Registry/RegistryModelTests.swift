import BlimpCore
import Foundation
import Testing

@Suite struct RegistryModelTests {
    static let token = String(repeating: "AB", count: 32)

    @Test func tokensAreStoredLowerCase() throws {
        #expect(try PushToken.normalize(Self.token, path: "t") == Self.token.lowercased())
    }

    static let badTokens = ["", "abc", String(repeating: "a", count: 65), String(repeating: "g", count: 64), String(repeating: "a", count: 202)]

    @Test(arguments: badTokens) func badTokensAreRefused(_ text: String) {
        #expect(throws: InvalidField.self) { try PushToken.normalize(text, path: "push_address") }
    }

    @Test func batchEntriesDefaultToUpdateTokensAndNameTheirPath() throws {
        let json = """
            {"live_activities": [
              {"action": "set", "id": "a1", "name": "match", "token": "\(Self.token)", "start_ts_ms": 1000, "action_ts_ms": 2000},
              {"action": "set", "type": "start_token", "attributes_type": "MatchAttributes", "token": "\(Self.token)", "action_ts_ms": 3000},
              {"action": "remove", "type": "update_token", "id": "a1", "name": "match", "start_ts_ms": 1000, "action_ts_ms": 4000}
            ]}
            """
        let batch = try JSONDecoder().decode(ChannelBatch.self, from: Data(json.utf8)).checked()
        #expect(batch.liveActivities == [
            .setActivity(name: "match", activityID: "a1", token: Self.token.lowercased(), startedAt: Date(timeIntervalSince1970: 1), actionMilliseconds: 2000),
            .setStartToken(attributesType: "MatchAttributes", token: Self.token.lowercased(), actionMilliseconds: 3000),
            .removeActivity(name: "match", activityID: "a1", startedAt: Date(timeIntervalSince1970: 1), actionMilliseconds: 4000),
        ])

        let bad = """
            {"live_activities": [
              {"action": "set", "id": "a1", "name": "match", "token": "\(Self.token)", "start_ts_ms": 1000, "action_ts_ms": 2000},
              {"action": "set", "id": "a1", "name": "match", "token": "xyz", "start_ts_ms": 1000, "action_ts_ms": 2000}
            ]}
            """
        #expect(throws: InvalidField("live_activities[1].token", "a token is 64 to 200 hex digits, an even number (got 3 characters)")) {
            try JSONDecoder().decode(ChannelBatch.self, from: Data(bad.utf8)).checked()
        }
    }

    @Test func tagRequestsFollowAirshipsLimits() throws {
        try TagOperations(add: ["device": ["a"]], remove: ["loyalty": ["b"]]).validate(exclusiveSet: true)
        #expect(throws: InvalidField.self) { try TagOperations().validate(exclusiveSet: true) }
        #expect(throws: InvalidField.self) { try TagOperations(add: ["g": ["a"]], set: ["g": ["b"]]).validate(exclusiveSet: true) }
        #expect(throws: InvalidField.self) { try TagOperations(add: ["g": [""]]).validate(exclusiveSet: false) }
        #expect(throws: InvalidField.self) {
            try TagOperations(add: ["g": (0...100).map { "t\($0)" }]).validate(exclusiveSet: false)
        }
    }

    @Test func registrationsCheckTheirFields() throws {
        let json = """
            {"device_type": "ios", "opt_in": true, "push_address": "\(Self.token)", "set_tags": true, "tags": ["a"],
             "tag_changes": {"add": ["b"]}, "ios": {"tz": "Europe/Berlin", "frequent_pushes_enabled": true}, "sdk_version": "19.1.0"}
            """
        let checked = try JSONDecoder().decode(ChannelRegistration.self, from: Data(json.utf8)).checked()
        #expect(checked.pushAddress == Self.token.lowercased())
        #expect(checked.tags == TagOperations(add: ["device": ["b"]], set: ["device": ["a"]]))
        #expect(checked.fields.ios?.frequentPushesEnabled == true)
        let android = try JSONDecoder().decode(ChannelRegistration.self, from: Data(#"{"device_type": "android"}"#.utf8))
        #expect(throws: InvalidField.self) { try android.checked() }
    }

    @Test func activitiesStopUpdatingAfterEightHours() {
        let start = Date(timeIntervalSince1970: 0)
        #expect(LiveActivityLifetime.isUpdatable(startedAt: start, now: start.addingTimeInterval(8 * 3600 - 1)))
        #expect(!LiveActivityLifetime.isUpdatable(startedAt: start, now: start.addingTimeInterval(8 * 3600)))
    }
}
