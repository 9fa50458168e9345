import Foundation
import Testing

@testable import BlimpCore

/// Request bodies for the Push API tests, and what becomes of them.
enum PushInput {
    /// Parses `text` as JSON, failing the test on a syntax error.
    static func json(_ text: String) throws -> RawJSON {
        try RawJSONParser.parse(Array(text.utf8))
    }

    /// The pushes of a request body.
    static func pushes(_ text: String) throws -> [Push] {
        try Push.pushes(in: json(text))
    }

    /// The one push of a request body.
    static func push(_ text: String) throws -> Push {
        let all = try pushes(text)
        try #require(all.count == 1)
        return all[0]
    }

    /// Why a (syntactically valid) request body is refused; `nil` when it is accepted.
    static func refusal(_ text: String) throws -> InvalidField? {
        let body = try json(text)
        do {
            _ = try Push.pushes(in: body)
            return nil
        } catch {
            return error
        }
    }

    /// A push to everyone whose `notification` is `notification`.
    static func request(notification: String) -> String {
        #"{"audience": "all", "device_types": ["ios"], "notification": \#(notification)}"#
    }

    /// A push whose `notification.ios.live_activity` has `fields`.
    static func liveActivity(_ fields: String) -> String {
        request(notification: #"{"ios": {"live_activity": {\#(fields)}}}"#)
    }
}

// MARK: - Audience

@Suite struct AudienceSelectorTests {
    static let channel = "9C36E8C7-5A73-47C0-9716-99FD3D4197D5"

    static func audience(_ text: String) throws -> Audience {
        try Audience.parse(PushInput.json(text))
    }

    static func refusal(_ text: String) throws -> InvalidField? {
        let value = try PushInput.json(text)
        do {
            _ = try Audience.parse(value)
            return nil
        } catch {
            return error
        }
    }

    @Test func allStandsAlone() throws {
        #expect(try Self.audience(#""all""#) == .all)
        #expect(try Self.audience(#""ALL""#) == .all)
        #expect(Audience.all.json == .string("all"))
        #expect(try Self.refusal(#""everyone""#) == InvalidField("audience", "the only atomic audience is \"all\""))
        #expect(try Self.refusal(#""triggered""#)?.path == "audience")
    }

    @Test func tagsDefaultToTheDeviceGroup() throws {
        let tag = try Self.audience(#"{"tag": "tigers"}"#)
        #expect(tag == .tag("tigers", group: "device"))
        #expect(tag.json.text == #"{"tag":"tigers","group":"device"}"#)

        let grouped = try Self.audience(#"{"group": "teams", "tag": "tigers"}"#)
        #expect(grouped == .tag("tigers", group: "teams"))
        #expect(grouped.json.text == #"{"tag":"tigers","group":"teams"}"#)

        // Selector keys are case-insensitive, as in Airship's parser.
        #expect(try Self.audience(#"{"TAG": "Tigers", "Group": "Teams"}"#) == .tag("Tigers", group: "Teams"))
    }

    @Test func anArrayValueMeansOr() throws {
        let either = try Self.audience(#"{"tag": ["a", "b"], "group": "g"}"#)
        #expect(either == .or([.tag("a", group: "g"), .tag("b", group: "g")]))
        #expect(either.json.text == #"{"or":[{"tag":"a","group":"g"},{"tag":"b","group":"g"}]}"#)
        #expect(try Self.audience(#"{"tag": ["a"]}"#) == .tag("a", group: "device"))
        #expect(try Self.refusal(#"{"tag": []}"#) == InvalidField("audience.tag", "must not be an empty array"))
        #expect(try Self.refusal(#"{"tag": ["a", ""]}"#) == InvalidField("audience.tag[1]", "a tag is 1 to 128 characters and at most 512 bytes"))
        #expect(try Self.refusal(#"{"tag": ""}"#) == InvalidField("audience.tag", "a tag is 1 to 128 characters and at most 512 bytes"))
        #expect(try Self.refusal(#"{"tag": "\#(String(repeating: "t", count: 129))"}"#)?.path == "audience.tag")
        #expect(try Self.audience(#"{"tag": "\#(String(repeating: "t", count: 128))"}"#) == .tag(String(repeating: "t", count: 128), group: "device"))
    }

    @Test func channelsAreUUIDsStoredLowerCase() throws {
        let id = try #require(UUID(uuidString: Self.channel))
        let ios = try Self.audience(#"{"ios_channel": "\#(Self.channel)"}"#)
        #expect(ios == .channel(id))
        #expect(ios.json.text == #"{"channel":"\#(Self.channel.lowercased())"}"#)
        #expect(try Self.audience(#"{"channel": "\#(Self.channel.lowercased())"}"#) == .channel(id))

        #expect(try Self.refusal(#"{"ios_channel": "not-a-uuid"}"#) == InvalidField("audience.ios_channel", "expected a channel id (a UUID)"))
        #expect(try Self.refusal(#"{"channel": "\#(Self.channel.dropLast())"}"#)?.path == "audience.channel")
        #expect(try Self.refusal(#"{"channel": "\#(Self.channel.replacingOccurrences(of: "-", with: ""))"}"#)?.path == "audience.channel")
        #expect(try Self.refusal(#"{"channel": ["\#(Self.channel)", 7]}"#)?.path == "audience.channel[1]")
    }

    @Test func namedUsers() throws {
        let user = try Self.audience(#"{"named_user": "user-123"}"#)
        #expect(user == .namedUser("user-123"))
        #expect(user.json.text == #"{"named_user":"user-123"}"#)
        #expect(try Self.refusal(#"{"named_user": " user"}"#)?.message == "a named user id is 1 to 128 characters without surrounding white space")
        #expect(try Self.refusal(#"{"named_user": "bob\n"}"#)?.path == "audience.named_user")
        #expect(try Self.refusal(#"{"named_user": 123}"#) == InvalidField("audience.named_user", "expected a named user id, not a number"))
    }

    @Test func compoundSelectors() throws {
        let text = #"""
            {"and": [{"tag": "sports"},
                     {"or": [{"ios_channel": "\#(Self.channel)"}, {"not": {"group": "loyalty", "tag": "gold"}}]},
                     {"not": [{"named_user": "bob"}]}]}
            """#
        let audience = try Self.audience(text)
        #expect(audience == .and([
            .tag("sports", group: "device"),
            .or([.channel(UUID(uuidString: Self.channel)!), .not(.tag("gold", group: "loyalty"))]),
            .not(.namedUser("bob")),
        ]))
        #expect(audience.json.text == #"{"and":[{"tag":"sports","group":"device"},{"or":[{"channel":"\#(Self.channel.lowercased())"},{"not":{"tag":"gold","group":"loyalty"}}]},{"not":{"named_user":"bob"}}]}"#)
    }

    @Test func refusalsNameTheirPath() throws {
        #expect(try Self.refusal(#"{"tag": "a", "ios_channel": "\#(Self.channel)"}"#) == InvalidField("audience", "Specified more than one type of selector"))
        #expect(try Self.refusal(#"{"and": [{"tag": "a"}, {"tag": "b", "named_user": "c"}]}"#) == InvalidField("audience.and[1]", "Specified more than one type of selector"))
        #expect(try Self.refusal(#"{"tag": "a", "TAG": "b"}"#)?.message == "Specified more than one type of selector")
        #expect(try Self.refusal(#"{"group": "g"}"#) == InvalidField("audience", "a selector needs one type, such as tag or ios_channel"))
        #expect(try Self.refusal(#"{}"#)?.path == "audience")

        #expect(try Self.refusal(#"{"and": []}"#) == InvalidField("audience.and", "A compound selector must have at least one child"))
        #expect(try Self.refusal(#"{"or": []}"#) == InvalidField("audience.or", "A compound selector must have at least one child"))
        #expect(try Self.refusal(#"{"or": {"tag": "a"}}"#) == InvalidField("audience.or", "expected an array of selectors, not an object"))
        #expect(try Self.refusal(#"{"not": []}"#) == InvalidField("audience.not", "not takes exactly one selector"))
        #expect(try Self.refusal(#"{"not": [{"tag": "a"}, {"tag": "b"}]}"#) == InvalidField("audience.not", "not takes exactly one selector"))

        #expect(try Self.refusal(#"{"or": [{"tag": "a"}, "all"]}"#) == InvalidField("audience.or[1]", "\"all\" cannot be combined with other selectors"))
        #expect(try Self.refusal(#"{"not": "all"}"#) == InvalidField("audience.not", "\"all\" cannot be combined with other selectors"))
        #expect(try Self.refusal(#"{"and": [5]}"#) == InvalidField("audience.and[0]", "expected a selector object, not a number"))
        #expect(try Self.refusal(#"["all"]"#) == InvalidField("audience", "expected a selector object, not an array"))

        #expect(try Self.refusal(#"{"segment": "s1"}"#) == InvalidField("audience.segment", "the segment selector is not supported by Blimp"))
        #expect(try Self.refusal(#"{"or": [{"tag": "a"}, {"alias": "x"}]}"#) == InvalidField("audience.or[1].alias", "the alias selector is not supported by Blimp"))
        #expect(try Self.refusal(#"{"colour": "red"}"#) == InvalidField("audience.colour", "unknown selector type 'colour'"))

        #expect(try Self.refusal(#"{"named_user": "bob", "group": "g"}"#) == InvalidField("audience.group", "only a tag selector takes a group"))
        #expect(try Self.refusal(#"{"and": [{"tag": "a"}], "group": "g"}"#) == InvalidField("audience.group", "only a tag selector takes a group"))
        #expect(try Self.refusal(#"{"tag": "a", "group": 5}"#) == InvalidField("audience.group", "expected a tag group, not a number"))

        #expect(try Self.refusal(#"{"and": [{"tag": "a"}, {"tag": 5}]}"#) == InvalidField("audience.and[1].tag", "expected a tag, not a number"))
        #expect(try Self.refusal(#"{"and": [{"tag": "a"}, {"or": [{"not": {"ios_channel": "x"}}]}]}"#)?.path == "audience.and[1].or[0].not.ios_channel")
    }

    @Test func atMost1000Selectors() throws {
        func tags(_ count: Int, from start: Int = 0) -> String {
            "[" + (start..<start + count).map { "\"t\($0)\"" }.joined(separator: ",") + "]"
        }
        guard case .or(let atoms) = try Self.audience(#"{"tag": \#(tags(1000))}"#) else {
            Issue.record("1,000 tags are one OR")
            return
        }
        #expect(atoms.count == 1000)
        #expect(try Self.refusal(#"{"tag": \#(tags(1001))}"#) == InvalidField("audience", "an audience may use at most 1000 selectors"))
        // Counted across the whole audience, not per selector.
        #expect(try Self.audience(#"{"or": [{"tag": \#(tags(500))}, {"tag": \#(tags(500, from: 500))}]}"#) != .all)
        #expect(try Self.refusal(#"{"or": [{"tag": \#(tags(500))}, {"tag": \#(tags(501, from: 500))}]}"#) == InvalidField("audience.or[1]", "an audience may use at most 1000 selectors"))
    }

    @Test func nestingIsLimitedTo16() throws {
        func nots(_ count: Int) -> String {
            String(repeating: #"{"not": "#, count: count) + #"{"tag": "a"}"# + String(repeating: "}", count: count)
        }
        // 15 `not`s around a tag is 16 levels of selectors.
        var expected = Audience.tag("a", group: "device")
        for _ in 0..<15 { expected = .not(expected) }
        #expect(try Self.audience(nots(15)) == expected)
        #expect(try Self.refusal(nots(16)) == InvalidField("audience" + String(repeating: ".not", count: 16), "selectors nest more than 16 deep"))
        let ands = String(repeating: #"{"and": ["#, count: 16) + #"{"tag": "a"}"# + String(repeating: "]}", count: 16)
        #expect(try Self.refusal(ands)?.message == "selectors nest more than 16 deep")
    }
}

// MARK: - Live Activities

@Suite struct LiveActivityRequestTests {
    static let start = #"""
        "event": "start", "name": "match-42", "attributes_type": "MatchAttributes",
        "attributes": {"home": "Foxes", "away": "Tigers"}, "content_state": {"home": 0, "away": 0, "odds": 0.941},
        "alert": {"title": "Kick-off", "body": "Foxes v Tigers", "sound": "whistle.caf"}
        """#

    static func activity(_ fields: String) throws -> LiveActivityNotification {
        let push = try PushInput.push(PushInput.liveActivity(fields))
        guard case .liveActivity(let activity) = push.content else {
            Issue.record("not a Live Activity push")
            throw InvalidField("", "not a Live Activity push")
        }
        return activity
    }

    static func refusal(_ fields: String) throws -> InvalidField? {
        try PushInput.refusal(PushInput.liveActivity(fields))
    }

    static let path = "notification.ios.live_activity"

    @Test func startKeepsEverythingAsSent() throws {
        let activity = try Self.activity(Self.start + #", "priority": 5, "stale_date": 1800000000, "dismissal_date": 1800003600, "relevance_score": 75.50, "timestamp": 1790000000"#)
        #expect(activity == LiveActivityNotification(
            event: .start, name: "match-42",
            contentState: try PushInput.json(#"{"home": 0, "away": 0, "odds": 0.941}"#),
            attributesType: "MatchAttributes",
            attributes: try PushInput.json(#"{"home": "Foxes", "away": "Tigers", "activityName": "match-42"}"#),
            alert: try PushInput.json(#"{"title": "Kick-off", "body": "Foxes v Tigers", "sound": "whistle.caf"}"#),
            priority: .conservingPower, staleDate: 1_800_000_000, dismissalDate: 1_800_003_600, relevanceScore: .number("75.50"),
            timestamp: 1_790_000_000
        ))
        #expect(activity.contentState?.text == #"{"home":0,"away":0,"odds":0.941}"#)
        #expect(try Self.activity(Self.start).priority == .immediate)
    }

    @Test func startNeedsAttributesContentStateAndAlert() throws {
        let attributesError = "attributes_type and attributes are required for event start"
        let base = #""event": "start", "name": "n", "content_state": {"s": 1}, "alert": {"body": "b"}"#
        #expect(try Self.refusal(base + #", "attributes": {"a": 1}"#) == InvalidField("\(Self.path).attributes", attributesError))
        #expect(try Self.refusal(base + #", "attributes_type": "T""#) == InvalidField("\(Self.path).attributes", attributesError))
        #expect(try Self.refusal(base + #", "attributes_type": "T", "attributes": {}"#) == InvalidField("\(Self.path).attributes", attributesError))
        #expect(try Self.refusal(base + #", "attributes_type": "T", "attributes": null"#)?.message == attributesError)
        #expect(try Self.refusal(base + #", "attributes_type": "T", "attributes": {"a": 1}"#) == nil)

        let attributes = #""event": "start", "name": "n", "attributes_type": "T", "attributes": {"a": 1}"#
        #expect(try Self.refusal(attributes + #", "alert": {"body": "b"}"#) == InvalidField("\(Self.path).content_state", "content_state is required for event start"))
        #expect(try Self.refusal(attributes + #", "content_state": {"s": 1}"#) == InvalidField("\(Self.path).alert", "an alert is required for event start: APNs needs one to start an activity"))
    }

    /// The app tracks a pushed-to-start activity under `attributes.activityName`: Blimp sets it to the name, and one
    /// the sender gives must be the name.
    @Test func startCarriesItsNameInItsAttributes() throws {
        let named = #""event": "start", "name": "n", "attributes_type": "T", "content_state": {"s": 1}, "alert": {"body": "b"}"#
        #expect(try Self.activity(named + #", "attributes": {"a": 1, "activityName": "n"}"#).attributes?.text == #"{"a":1,"activityName":"n"}"#)
        #expect(try Self.refusal(named + #", "attributes": {"activityName": "m"}"#) == InvalidField(
            "\(Self.path).attributes.activityName", "activityName must equal the name: the app tracks the activity under it"))
        #expect(try Self.refusal(named + #", "attributes": {"activityName": 1}"#)?.path == "\(Self.path).attributes.activityName")
    }

    @Test func updateNeedsContentStateAndNoAttributes() throws {
        let update = try Self.activity(#""event": "update", "name": "n", "content_state": {"s": 1}"#)
        #expect(update == LiveActivityNotification(event: .update, name: "n", contentState: .object([.init("s", .number("1"))]), priority: .immediate))
        #expect(try Self.refusal(#""event": "update", "name": "n""#) == InvalidField("\(Self.path).content_state", "content_state is required for event update"))
        #expect(try Self.refusal(#""event": "update", "name": "n", "content_state": {"s": 1}, "attributes": {"a": 1}"#) == InvalidField("\(Self.path).attributes", "attributes is only for event start"))
        // attributes_type is a hint the content is checked against, kept apart from a start's type (the one APNs gets).
        let hinted = try Self.activity(#""event": "update", "name": "n", "content_state": {"s": 1}, "attributes_type": "T""#)
        #expect(hinted.typeHint == "T" && hinted.attributesType == nil)

        #expect(try Self.refusal(#""event": "update", "name": "n", "content_state": [1]"#) == InvalidField("\(Self.path).content_state", "expected an object, not an array"))

        // End needs no content state, and takes no attributes either.
        let end = try Self.activity(#""event": "end", "name": "n", "dismissal_date": 1800000000"#)
        #expect(end.event == .end && end.contentState == nil && end.dismissalDate == 1_800_000_000)
        #expect(try Self.refusal(#""event": "end", "name": "n", "attributes": {"a": 1}"#)?.path == "\(Self.path).attributes")
    }

    @Test func eventAndNameAreRequired() throws {
        #expect(try Self.refusal(#""name": "n", "content_state": {"s": 1}"#) == InvalidField("\(Self.path).event", "event is required"))
        #expect(try Self.refusal(#""event": "pause", "name": "n""#) == InvalidField("\(Self.path).event", "must be one of 'start', 'update', 'end'"))
        #expect(try Self.refusal(#""event": "end""#) == InvalidField("\(Self.path).name", "name is required"))
        #expect(try Self.refusal(#""event": "end", "name": """#) == InvalidField("\(Self.path).name", "must not be empty"))
        #expect(try Self.refusal(#""event": "end", "name": 42"#) == InvalidField("\(Self.path).name", "expected a string, not a number"))
        #expect(try Self.refusal(#""event": "end", "name": "\#(String(repeating: "n", count: 257))""#) == InvalidField("\(Self.path).name", "name is 1 to 256 characters and at most 1024 bytes"))
    }

    @Test func priorityIs5Or10() throws {
        #expect(try Self.refusal(#""event": "end", "name": "n", "priority": 7"#) == InvalidField("\(Self.path).priority", "must be 5 or 10"))
        #expect(try Self.refusal(#""event": "end", "name": "n", "priority": 10.0"#) == InvalidField("\(Self.path).priority", "expected a whole number, not a number"))
        #expect(try Self.refusal(#""event": "end", "name": "n", "priority": "5""#)?.path == "\(Self.path).priority")
        #expect(try Self.activity(#""event": "end", "name": "n", "priority": 5"#).priority == .conservingPower)
        #expect(try Self.activity(#""event": "end", "name": "n", "priority": 10"#).priority == .immediate)
    }

    @Test func timestampsAreEpochSeconds() throws {
        #expect(try Self.activity(#""event": "end", "name": "n", "timestamp": 1790000000"#).timestamp == 1_790_000_000)
        let milliseconds = try #require(try Self.refusal(#""event": "end", "name": "n", "timestamp": 1790000000000"#))
        #expect(milliseconds.path == "\(Self.path).timestamp")
        #expect(try Self.refusal(#""event": "end", "name": "n", "stale_date": 1790000000000"#)?.path == "\(Self.path).stale_date")
        #expect(try Self.refusal(#""event": "end", "name": "n", "dismissal_date": 1790000000000"#)?.path == "\(Self.path).dismissal_date")
        #expect(try Self.refusal(#""event": "end", "name": "n", "timestamp": 1790000000.5"#)?.path == "\(Self.path).timestamp")
        #expect(try Self.refusal(#""event": "end", "name": "n", "timestamp": 0"#)?.path == "\(Self.path).timestamp")
    }

    @Test func alerts() throws {
        let localized = #""event": "update", "name": "n", "content_state": {"s": 1}, "alert": {"title": {"loc-key": "GOAL", "loc-args": ["Foxes", "67"]}, "body": {"loc-key": "SCORE"}, "sound": "goal.caf"}"#
        #expect(try Self.activity(localized).alert?.text == #"{"title":{"loc-key":"GOAL","loc-args":["Foxes","67"]},"body":{"loc-key":"SCORE"},"sound":"goal.caf"}"#)

        let base = #""event": "update", "name": "n", "content_state": {"s": 1}, "alert": "#
        #expect(try Self.refusal(base + #"{"title": "t", "subtitle": "s"}"#) == InvalidField("\(Self.path).alert.subtitle", "the key 'subtitle' is not allowed in this context"))
        #expect(try Self.refusal(base + #"{}"#) == InvalidField("\(Self.path).alert", "needs a title, a body or a sound"))
        #expect(try Self.refusal(base + #""hi""#) == InvalidField("\(Self.path).alert", "expected an object, not a string"))
        #expect(try Self.refusal(base + #"{"body": {"loc-args": ["a"]}}"#) == InvalidField("\(Self.path).alert.body.loc-key", "loc-key is required"))
        #expect(try Self.refusal(base + #"{"body": {"loc-key": "K", "loc-args": [1]}}"#) == InvalidField("\(Self.path).alert.body.loc-args", "expected an array of strings"))
        #expect(try Self.refusal(base + #"{"body": {"loc-key": "K", "args": []}}"#)?.path == "\(Self.path).alert.body.args")
        #expect(try Self.refusal(base + #"{"title": 5}"#)?.path == "\(Self.path).alert.title")
        #expect(try Self.refusal(base + #"{"sound": 5}"#) == InvalidField("\(Self.path).alert.sound", "expected a string, not a number"))
    }

    @Test func unknownKeysAreRefusedByPath() throws {
        #expect(try Self.refusal(#""event": "end", "name": "n", "contentState": {}"#) == InvalidField("\(Self.path).contentState", "the key 'contentState' is not allowed in this context"))
        #expect(try Self.refusal(#""event": "end", "name": "n", "input_push_token": 1"#)?.path == "\(Self.path).input_push_token")
        let notObject = try PushInput.refusal(PushInput.request(notification: #"{"ios": {"live_activity": [1]}}"#))
        #expect(notObject == InvalidField(Self.path, "expected an object, not an array"))
    }

    @Test func liveActivityGoesAlone() throws {
        let activity = #"{"event": "end", "name": "n"}"#
        #expect(try PushInput.refusal(PushInput.request(notification: #"{"alert": "hi", "ios": {"live_activity": \#(activity)}}"#))
                == InvalidField("notification.alert", "live_activity goes alone; send alert in a push of its own"))
        #expect(try PushInput.refusal(PushInput.request(notification: #"{"ios": {"live_activity": \#(activity), "badge": 1}}"#))
                == InvalidField("notification.ios.badge", "live_activity goes alone; send ios.badge in a push of its own"))
        #expect(try PushInput.refusal(PushInput.request(notification: #"{"ios": {"sound": "s", "live_activity": \#(activity)}}"#))?.path == "notification.ios.sound")
    }

    @Test func nullCountsAsAbsent() throws {
        let activity = #"{"event": "update", "name": "n", "content_state": {"s": 1}, "attributes": null, "attributes_type": null, "priority": null}"#
        let push = try PushInput.push(PushInput.request(notification: #"{"alert": null, "ios": {"badge": null, "live_activity": \#(activity)}}"#))
        #expect(push.content == .liveActivity(LiveActivityNotification(event: .update, name: "n", contentState: try PushInput.json(#"{"s": 1}"#), priority: .immediate)))
        // A null live_activity makes an ordinary alert.
        guard case .alert = try PushInput.push(PushInput.request(notification: #"{"alert": "hi", "ios": {"live_activity": null}}"#)).content else {
            Issue.record("not an alert")
            return
        }
    }
}

// MARK: - Alerts

@Suite struct AlertRequestTests {
    static func alert(_ notification: String) throws -> AlertNotification {
        let push = try PushInput.push(PushInput.request(notification: notification))
        guard case .alert(let alert) = push.content else {
            Issue.record("not an alert push")
            throw InvalidField("", "not an alert push")
        }
        return alert
    }

    static func refusal(_ notification: String) throws -> InvalidField? {
        try PushInput.refusal(PushInput.request(notification: notification))
    }

    @Test func aPlainAlertIsText() throws {
        let alert = try Self.alert(#"{"alert": "Doors open at 7"}"#)
        #expect(alert == AlertNotification(aps: [.init("alert", .string("Doors open at 7"))], extra: [], priority: .immediate))
        #expect(!alert.isBackground)
        // The iOS override's text takes the place of the general one.
        #expect(try Self.alert(#"{"alert": "general", "ios": {"alert": "for iOS"}}"#).aps == [.init("alert", .string("for iOS"))])
    }

    @Test func anAlertObjectAndTitlesMerge() throws {
        let object = try Self.alert(#"{"ios": {"alert": {"title": "T", "body": "B"}}}"#)
        #expect(RawJSON.object(object.aps).text == #"{"alert":{"title":"T","body":"B"}}"#)

        let merged = try Self.alert(#"{"alert": "B", "ios": {"title": "T", "subtitle": "S"}}"#)
        #expect(RawJSON.object(merged.aps).text == #"{"alert":{"title":"T","subtitle":"S","body":"B"}}"#)

        // `ios.title` replaces the object's title.
        let replaced = try Self.alert(#"{"ios": {"alert": {"body": "B", "title": "old"}, "title": "new"}}"#)
        #expect(RawJSON.object(replaced.aps).text == #"{"alert":{"title":"new","body":"B"}}"#)

        let titleOnly = try Self.alert(#"{"ios": {"title": "T"}}"#)
        #expect(RawJSON.object(titleOnly.aps).text == #"{"alert":{"title":"T"}}"#)

        let localized = try Self.alert(#"{"ios": {"alert": {"loc-key": "K", "loc-args": ["a", "b"], "title-loc-key": "TK"}}}"#)
        #expect(RawJSON.object(localized.aps).text == #"{"alert":{"loc-key":"K","loc-args":["a","b"],"title-loc-key":"TK"}}"#)

        #expect(try Self.refusal(#"{"ios": {"alert": {}}}"#) == InvalidField("notification.ios.alert", "needs at least a title or a body"))
        #expect(try Self.refusal(#"{"ios": {"alert": {"headline": "H"}}}"#)?.path == "notification.ios.alert.headline")
        #expect(try Self.refusal(#"{"ios": {"alert": {"loc-args": "a"}}}"#) == InvalidField("notification.ios.alert.loc-args", "expected an array of strings"))
        #expect(try Self.refusal(#"{"ios": {"alert": {"loc-key": "K", "title-loc-args": "a"}}}"#) == InvalidField("notification.ios.alert.title-loc-args", "expected an array of strings"))
        #expect(try Self.refusal(#"{"ios": {"alert": {"loc-key": ["K"]}}}"#) == InvalidField("notification.ios.alert.loc-key", "expected a string"))
        #expect(try Self.refusal(#"{"ios": {"alert": {"title": 1}}}"#) == InvalidField("notification.ios.alert.title", "expected a string"))
        #expect(try Self.refusal(#"{"ios": {"alert": 1}}"#) == InvalidField("notification.ios.alert", "expected a string or an object, not a number"))
        #expect(try Self.refusal(#"{"alert": {"title": "T"}}"#) == InvalidField("notification.alert", "expected a string, not an object"))
    }

    @Test func badgeSoundAndExtra() throws {
        let alert = try Self.alert(#"{"alert": "B", "ios": {"badge": 3, "sound": "chime.caf", "extra": {"url": "/tickets", "n": 1.50}, "thread_id": "t1", "mutable_content": true, "interruption_level": "time-sensitive", "relevance_score": 0.5}}"#)
        #expect(RawJSON.object(alert.aps).text == #"{"alert":"B","badge":3,"sound":"chime.caf","mutable-content":1,"thread-id":"t1","interruption-level":"time-sensitive","relevance-score":0.5}"#)
        #expect(alert.extra == [.init("url", .string("/tickets")), .init("n", .number("1.50"))])
        #expect(!alert.isBackground)

        let critical = try Self.alert(#"{"ios": {"sound": {"name": "alarm.caf", "critical": true, "volume": 0.8}}}"#)
        #expect(RawJSON.object(critical.aps).text == #"{"sound":{"name":"alarm.caf","critical":1,"volume":0.8}}"#)
        #expect(!critical.isBackground)

        // A badge alone is a visible (alert) push.
        let badge = try Self.alert(#"{"ios": {"badge": 0}}"#)
        #expect(badge.aps == [.init("badge", .number("0"))] && !badge.isBackground && badge.priority == .immediate)

        #expect(try Self.refusal(#"{"ios": {"badge": -1}}"#) == InvalidField("notification.ios.badge", "must be between 0 and 99999"))
        #expect(try Self.refusal(#"{"ios": {"badge": "+1"}}"#)?.path == "notification.ios.badge")
        #expect(try Self.refusal(#"{"ios": {"sound": {"critical": true}}}"#) == InvalidField("notification.ios.sound.name", "name is required"))
        #expect(try Self.refusal(#"{"ios": {"sound": {"name": "a", "volume": 2}}}"#)?.path == "notification.ios.sound.volume")
        #expect(try Self.refusal(#"{"ios": {"alert": "B", "interruption_level": "loud"}}"#)?.path == "notification.ios.interruption_level")
        #expect(try Self.refusal(#"{"ios": {"alert": "B", "relevance_score": 1.5}}"#)?.path == "notification.ios.relevance_score")
        #expect(try Self.refusal(#"{"ios": {"alert": "B", "extra": {"aps": {"badge": 1}}}}"#) == InvalidField("notification.ios.extra.aps", "extra keys go beside aps and cannot replace it"))
        #expect(try Self.refusal(#"{"ios": {"alert": "B", "extra": "x"}}"#) == InvalidField("notification.ios.extra", "expected an object, not a string"))
        #expect(try Self.refusal(#"{"ios": {"alert": "B", "category": "c"}}"#) == InvalidField("notification.ios.category", "the key 'category' is not allowed in this context"))
        #expect(try Self.refusal(#"{"android": {"alert": "B"}}"#)?.path == "notification.android")
    }

    @Test func contentAvailableAloneIsABackgroundPush() throws {
        let background = try Self.alert(#"{"ios": {"content_available": true}}"#)
        #expect(background == AlertNotification(aps: [.init("content-available", .number("1"))], extra: [], priority: .conservingPower))
        #expect(background.isBackground)
        #expect(try Self.alert(#"{"ios": {"content_available": true, "priority": 5}}"#).priority == .conservingPower)
        #expect(try Self.alert(#"{"ios": {"content_available": true, "priority": null}}"#).priority == .conservingPower)
        #expect(try Self.alert(#"{"ios": {"content_available": true, "extra": {"k": 1}}}"#).isBackground)
        #expect(try Self.refusal(#"{"ios": {"content_available": true, "priority": 10}}"#)
                == InvalidField("notification.ios.priority", "a background push (content_available only) must have priority 5"))

        // With an alert, content-available rides along at the requested priority.
        let visible = try Self.alert(#"{"alert": "B", "ios": {"content_available": true}}"#)
        #expect(!visible.isBackground && visible.priority == .immediate)
        #expect(try Self.alert(#"{"alert": "B", "ios": {"priority": 5}}"#).priority == .conservingPower)
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"priority": 7}}"#) == InvalidField("notification.ios.priority", "must be 5 or 10"))
    }

    static let nothingToShow = [
        #"{}"#,
        #"{"ios": {}}"#,
        #"{"ios": {"content_available": false}}"#,
        #"{"ios": {"extra": {"k": 1}}}"#,
        #"{"ios": {"mutable_content": true}}"#,
        #"{"ios": {"thread_id": "t"}}"#,
        #"{"ios": {"interruption_level": "passive", "relevance_score": 1}}"#,
    ]

    @Test(arguments: nothingToShow) func aNotificationNeedsSomethingToShowOrContentAvailable(_ notification: String) throws {
        #expect(try Self.refusal(notification)
                == InvalidField("notification", "a notification needs an alert, a badge, a sound, content_available or a live_activity"))
    }

    @Test func collapseIDIsAtMost64Bytes() throws {
        let sixtyFour = String(repeating: "c", count: 64)
        #expect(try Self.alert(#"{"alert": "B", "ios": {"collapse_id": "\#(sixtyFour)"}}"#).collapseID == sixtyFour)
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"collapse_id": "\#(sixtyFour)c"}}"#) == InvalidField("notification.ios.collapse_id", "must be at most 64 bytes"))
        // Bytes, not characters: 33 × "é" is 66 bytes.
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"collapse_id": "\#(String(repeating: "é", count: 33))"}}"#)?.path == "notification.ios.collapse_id")
    }

    @Test func expiryIsSecondsOrADate() throws {
        let seconds = try PushInput.push(PushInput.request(notification: #"{"alert": "B", "ios": {"expiry": 3600}}"#))
        #expect(seconds.expiry == .after(seconds: 3600))
        guard case .alert(let alert) = seconds.content else { Issue.record("not an alert"); return }
        #expect(alert.expiry == .after(seconds: 3600))

        let date = try PushInput.push(PushInput.request(notification: #"{"alert": "B", "ios": {"expiry": "2030-01-02T03:04:05"}}"#))
        #expect(date.expiry == .at(Date(timeIntervalSince1970: 1_893_553_445)))
        #expect(PushExpiry.at(Date(timeIntervalSince1970: 1_893_553_445)).date(acceptedAt: .now) == Date(timeIntervalSince1970: 1_893_553_445))
        #expect(PushExpiry.after(seconds: 60).date(acceptedAt: Date(timeIntervalSince1970: 1000)) == Date(timeIntervalSince1970: 1060))

        #expect(try PushInput.push(PushInput.request(notification: #"{"alert": "B", "ios": {"expiry": 0}}"#)).expiry == .after(seconds: 0))
        let expected = "expected seconds or a time from 1970 through 2199 as YYYY-MM-DDTHH:MM:SS"
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"expiry": "tomorrow"}}"#) == InvalidField("notification.ios.expiry", expected))
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"expiry": "0000-01-01T00:00:00"}}"#) == InvalidField("notification.ios.expiry", expected))
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"expiry": "2026-02-30T00:00:00"}}"#) == InvalidField("notification.ios.expiry", expected))
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"expiry": -1}}"#)?.path == "notification.ios.expiry")
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"expiry": 1.5}}"#)?.path == "notification.ios.expiry")
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"expiry": 2592001}}"#)?.path == "notification.ios.expiry")
        #expect(try Self.refusal(#"{"alert": "B", "ios": {"expiry": true}}"#)?.path == "notification.ios.expiry")
    }
}

// MARK: - The push object

@Suite struct PushRequestTests {
    static let update = #"{"ios": {"live_activity": {"event": "update", "name": "n", "content_state": {"s": 1}}}}"#

    @Test func aCompletePush() throws {
        let text = #"{"audience": {"tag": "tigers", "group": "teams"}, "device_types": ["ios", "android"], "notification": \#(Self.update), "options": {"expiry": 600}}"#
        let push = try PushInput.push(text)
        #expect(push.audience == .tag("tigers", group: "teams"))
        #expect(push.expiry == .after(seconds: 600))
        #expect(push.request == (try PushInput.json(text)))
        #expect(push.content == .liveActivity(LiveActivityNotification(event: .update, name: "n", contentState: try PushInput.json(#"{"s": 1}"#), priority: .immediate)))
    }

    @Test func audienceDeviceTypesAndNotificationAreRequired() throws {
        #expect(try PushInput.refusal(#"{"device_types": ["ios"], "notification": \#(Self.update)}"#) == InvalidField("audience", "'audience' must be set"))
        #expect(try PushInput.refusal(#"{"audience": null, "device_types": ["ios"], "notification": \#(Self.update)}"#) == InvalidField("audience", "'audience' must be set"))
        #expect(try PushInput.refusal(#"{"audience": "all", "notification": \#(Self.update)}"#) == InvalidField("device_types", "'device_types' must be set"))
        #expect(try PushInput.refusal(#"{"audience": "all", "device_types": ["ios"]}"#) == InvalidField("notification", "'notification' must be set"))
        #expect(try PushInput.refusal(#"{"audience": {"tag": 1}, "device_types": ["ios"], "notification": \#(Self.update)}"#)?.path == "audience.tag")
    }

    @Test func deviceTypesMustIncludeIOS() throws {
        func deviceTypes(_ value: String) throws -> InvalidField? {
            try PushInput.refusal(#"{"audience": "all", "device_types": \#(value), "notification": \#(Self.update)}"#)
        }
        #expect(try deviceTypes(#""all""#) == nil)
        #expect(try deviceTypes(#"["ios"]"#) == nil)
        #expect(try deviceTypes(#"["android", "ios", "open::tv"]"#) == nil)
        #expect(try deviceTypes(#"["android"]"#) == InvalidField("device_types", "Blimp sends to iOS only: include \"ios\""))
        #expect(try deviceTypes(#"[]"#) == InvalidField("device_types", "Blimp sends to iOS only: include \"ios\""))
        #expect(try deviceTypes(#"["ios", "blackberry"]"#) == InvalidField("device_types[1]", "unknown device type"))
        #expect(try deviceTypes(#"["ios", 1]"#) == InvalidField("device_types[1]", "unknown device type"))
        #expect(try deviceTypes(#""ios""#) == InvalidField("device_types", "expected an array of device types or \"all\", not a string"))
    }

    @Test func unknownKeysAreRefused() throws {
        #expect(try PushInput.refusal(#"{"audience": "all", "device_types": ["ios"], "notification": \#(Self.update), "campaigns": {}}"#)
                == InvalidField("campaigns", "the key 'campaigns' is not allowed in this context"))
        #expect(try PushInput.refusal(#"{"audience": "all", "device_types": ["ios"], "notification": {"alert1": "x"}}"#)
                == InvalidField("notification.alert1", "the key 'alert1' is not allowed in this context"))
        #expect(try PushInput.refusal(#"{"audience": "all", "device_types": ["ios"], "notification": \#(Self.update), "options": {"no_throttle": true}}"#)
                == InvalidField("options.no_throttle", "the key 'no_throttle' is not allowed in this context"))
        #expect(try PushInput.refusal(#""hello""#) == InvalidField("", "expected an object, not a string"))
        #expect(try PushInput.refusal(#"{"audience": "all", "device_types": ["ios"], "notification": "hi"}"#) == InvalidField("notification", "expected an object, not a string"))
    }

    @Test func optionsExpiry() throws {
        let base = #"{"audience": "all", "device_types": ["ios"], "notification": \#(Self.update), "options": "#
        #expect(try PushInput.push(base + #"{"expiry": 3600}}"#).expiry == .after(seconds: 3600))
        #expect(try PushInput.push(base + #"{"expiry": "2030-01-02 03:04:05"}}"#).expiry == .at(Date(timeIntervalSince1970: 1_893_553_445)))
        #expect(try PushInput.push(base + #"{}}"#).expiry == nil)
        #expect(try PushInput.refusal(base + #"{"expiry": "soon"}}"#)?.path == "options.expiry")
        // An alert's `ios.expiry` takes the place of `options.expiry`.
        let both = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "B", "ios": {"expiry": 60}}, "options": {"expiry": 3600}}"#
        #expect(try PushInput.push(both).expiry == .after(seconds: 60))
        let optionsOnly = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "B"}, "options": {"expiry": 3600}}"#
        #expect(try PushInput.push(optionsOnly).expiry == .after(seconds: 3600))
    }

    @Test func arraysCarry1To100Pushes() throws {
        let one = PushInput.request(notification: Self.update)
        func batch(_ count: Int) -> String { "[" + Array(repeating: one, count: count).joined(separator: ",") + "]" }
        #expect(try PushInput.pushes(batch(1)).count == 1)
        #expect(try PushInput.pushes(batch(100)).count == 100)
        #expect(try PushInput.refusal(batch(0)) == InvalidField("", "a request carries 1 to 100 push objects"))
        #expect(try PushInput.refusal(batch(101)) == InvalidField("", "a request carries 1 to 100 push objects"))

        let second = #"{"device_types": ["ios"], "notification": \#(Self.update)}"#
        #expect(try PushInput.refusal("[\(one), \(second)]") == InvalidField("[1].audience", "'audience' must be set"))
        let deep = PushInput.request(notification: #"{"ios": {"live_activity": {"event": "end", "name": "n", "priority": 7}}}"#)
        #expect(try PushInput.refusal("[\(one), \(one), \(deep)]") == InvalidField("[2].notification.ios.live_activity.priority", "must be 5 or 10"))
        let badAudience = #"{"audience": {"and": [{"tag": "a"}, {"tag": 5}]}, "device_types": ["ios"], "notification": \#(Self.update)}"#
        #expect(try PushInput.refusal("[\(one), \(badAudience)]")?.path == "[1].audience.and[1].tag")
        #expect(try PushInput.refusal("[\(one), 5]") == InvalidField("[1]", "expected an object, not a number"))
    }
}
