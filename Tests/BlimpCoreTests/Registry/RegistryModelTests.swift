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
        let batch = try ChannelBatch(json: try RawJSONParser.parse(json.utf8)).checked()
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
        let skipping = try ChannelBatch(json: try RawJSONParser.parse(bad.utf8)).checked()
        #expect(skipping.liveActivities.count == 1)
        #expect(skipping.skipped == [
            InvalidField("live_activities[1].token", "a token is 64 to 200 hex digits, an even number (got 3 characters)")
        ])
    }

    /// A phone whose clock is far off, or hostile numbers, cost the device only the entries they are in: each is
    /// skipped with its reason, and the rest of the batch applies.
    @Test func batchEntriesOutsideTheTimeWindowAreSkippedAndTheRestKept() throws {
        let json = """
            {"live_activities": [
              {"action": "set", "id": "a1", "name": "match", "token": "\(Self.token)", "start_ts_ms": 9000000000000000000, "action_ts_ms": 2000},
              {"action": "set", "id": "a2", "name": "match", "token": "\(Self.token)", "start_ts_ms": 1000, "action_ts_ms": -1},
              {"action": "set", "id": "a3", "name": "m\(String(repeating: "\u{301}", count: 3000))", "token": "\(Self.token)", "start_ts_ms": 1000, "action_ts_ms": 2000},
              "not an entry",
              {"action": "set", "id": "a4", "name": "match", "token": "\(Self.token)", "start_ts_ms": 7258118399999, "action_ts_ms": 2000}
            ], "tags": {"add": {"device": ["ok", ""]}}, "attributes": [
              {"action": "set", "key": "k", "value": "\(String(repeating: "x", count: 2000))"},
              {"action": "set", "key": "small", "value": 1}
            ]}
            """
        let batch = try ChannelBatch(json: try RawJSONParser.parse(json.utf8)).checked()
        #expect(batch.liveActivities.count == 1)
        #expect(batch.tags.isEmpty)
        #expect(batch.attributes.map(\.key) == ["small"])
        #expect(batch.skipped.map(\.path) == [
            "tags.add.device", "attributes[0].value", "live_activities[0].start_ts_ms", "live_activities[1].action_ts_ms",
            "live_activities[2].name", "live_activities[3]",
        ])
        #expect(throws: InvalidField("attributes", "at most 100 attribute changes per batch")) {
            let many = (0...100).map { #"{"action": "remove", "key": "k\#($0)"}"# }.joined(separator: ",")
            _ = try ChannelBatch(json: try RawJSONParser.parse(#"{"attributes": [\#(many)]}"#.utf8)).checked()
        }
    }

    /// Limits count bytes as well as characters: one letter with 3,000 combining marks is one character.
    @Test func namesAreBoundedInBytesAndRefuseNUL() {
        let heavy = "a" + String(repeating: "\u{301}", count: 3000)
        #expect(heavy.count == 1)
        #expect(throws: InvalidField("add", "a tag group name is 1 to 128 characters and at most 512 bytes")) {
            try TagOperations(add: [heavy: ["t"]]).validate(exclusiveSet: false)
        }
        #expect(throws: InvalidField.self) { try NamedUserID.check(heavy, path: "id") }
        #expect(throws: InvalidField("id", "a named user id must not contain NUL")) { try NamedUserID.check("a\u{0}b", path: "id") }
        #expect(throws: InvalidField.self) {
            try Audience.parse(try RawJSONParser.parse(#"{"tag": "\#(heavy)"}"#.utf8))
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
        // What one request may write: 100 groups, 1,000 tags.
        func groups(_ count: Int, tags: Int) -> [String: [String]] {
            Dictionary(uniqueKeysWithValues: (0..<count).map { ("g\($0)", (0..<tags).map { "t\($0)" }) })
        }
        try TagOperations(add: groups(50, tags: 10), remove: groups(50, tags: 10)).validate(exclusiveSet: false)
        #expect(throws: InvalidField("", "at most 100 tag groups in one request")) {
            try TagOperations(add: groups(51, tags: 1), remove: groups(50, tags: 1)).validate(exclusiveSet: false)
        }
        #expect(throws: InvalidField("", "at most 1000 tags in one request")) {
            try TagOperations(add: groups(11, tags: 100)).validate(exclusiveSet: false)
        }
    }

    @Test func registrationsCheckTheirFields() throws {
        let json = """
            {"device_type": "ios", "opt_in": true, "push_address": "\(Self.token)", "set_tags": true, "tags": ["a"],
             "tag_changes": {"add": ["b"]}, "ios": {"tz": "Europe/Berlin", "frequent_pushes_enabled": true}, "sdk_version": "19.1.0"}
            """
        let checked = try ChannelRegistration(json: try RawJSONParser.parse(json.utf8), at: "channel").checked()
        #expect(checked.pushAddress == Self.token.lowercased())
        #expect(checked.tags == TagOperations(add: ["device": ["b"]], set: ["device": ["a"]]))
        #expect(checked.fields.ios?.frequentPushesEnabled == true)
        let android = try ChannelRegistration(json: try RawJSONParser.parse(#"{"device_type": "android"}"#.utf8), at: "channel")
        #expect(throws: InvalidField.self) { try android.checked() }
    }

    @Test func sdkBodiesIgnoreWhatBlimpDoesNotUseAndNameWhatIsWrong() throws {
        func registration(_ json: String) throws -> ChannelRegistration {
            try ChannelRegistration(json: try RawJSONParser.parse(json.utf8), at: "channel")
        }
        let lenient = try registration("""
            {"device_type": "ios", "opt_in": null, "is_activity": false, "alias": "", "permissions": {"display_notifications": "granted"},
             "ios": {"badge": 3, "quiettime": {"start": "22:00", "end": "07:00"}, "scheduled_summary": true}}
            """)
        #expect(lenient.optIn == nil)
        #expect(lenient.alias == "")
        #expect(lenient.ios?.badge == 3)
        #expect(lenient.ios?.quietTime?.start == "22:00" && lenient.ios?.quietTime?.end == "07:00")
        let wrongRegistrations: [(String, InvalidField)] = [
            (#"{"opt_in": "yes"}"#, InvalidField("channel.opt_in", "expected a boolean, not a string")),
            (#"{"tags": "a"}"#, InvalidField("channel.tags", "expected an array of strings, not a string")),
            (#"{"tags": ["a", 1]}"#, InvalidField("channel.tags[1]", "expected a string, not a number")),
            (#"{"ios": []}"#, InvalidField("channel.ios", "expected an object, not an array")),
            (#"{"ios": {"badge": 4294967296}}"#, InvalidField("channel.ios.badge", "must be between -2147483648 and 2147483647")),
        ]
        for (json, error) in wrongRegistrations {
            #expect(throws: error) { try registration(json) }
        }

        func batch(_ json: String) throws -> CheckedChannelBatch {
            try ChannelBatch(json: try RawJSONParser.parse(json.utf8)).checked()
        }
        let checked = try batch("""
            {"tags": {"add": {"g": "one"}, "remove": {"h": ["a", "b"]}}, "subscription_lists": [],
             "attributes": [{"action": "set", "key": "k", "value": {"n": 1.5, "list": [true, null]}}]}
            """)
        #expect(checked.tags == TagOperations(add: ["g": ["one"]], remove: ["h": ["a", "b"]]))
        #expect(checked.attributes.first?.value == .object(["n": .number(1.5), "list": .array([.bool(true), .null])]))
        #expect(throws: InvalidField("live_activities", "expected an array, not an object")) { try batch(#"{"live_activities": {}}"#) }
        let skippedEntries: [(String, InvalidField)] = [
            (#"{"live_activities": [{"action": "set"}]}"#, InvalidField("live_activities[0].action_ts_ms", "action_ts_ms is required")),
            (#"{"live_activities": [{"action": "set", "action_ts_ms": 1.5}]}"#,
             InvalidField("live_activities[0].action_ts_ms", "expected a whole number, not a number")),
            (#"{"tags": {"add": {"g": [1]}}}"#, InvalidField("tags.add.g[0]", "expected a string, not a number")),
        ]
        for (json, error) in skippedEntries {
            #expect(try batch(json).skipped == [error])
        }
    }

    @Test func activitiesStopUpdatingAfterEightHours() {
        let start = Date(timeIntervalSince1970: 0)
        #expect(LiveActivityLifetime.isUpdatable(startedAt: start, now: start.addingTimeInterval(8 * 3600 - 1)))
        #expect(!LiveActivityLifetime.isUpdatable(startedAt: start, now: start.addingTimeInterval(8 * 3600)))
    }
}
