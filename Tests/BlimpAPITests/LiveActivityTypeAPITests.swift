import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import BlimpStore
import PostgresNIO
import Testing

/// `/api/live_activity_types` and the check of Live Activity content against the app's types in `/api/push`, its
/// validation and `/api/schedules`: a push whose content its type refuses is a 400 naming the path, and nothing of it
/// is queued. The end-to-end path with the official Python library and the worker is in BlimpCLITests
/// (LiveActivityTypeProcessTests).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct LiveActivityTypeAPITests {
    /// MatchAttributes: a start's `home` is required, the score a non-negative integer, the phase one of two, the
    /// kick-off a date, the scorers objects with a name, the note an optional string.
    static let matchSchemas = """
        {"attributes": {"type": "object", "properties": {"home": {"type": "string", "maxLength": 20}, "away": {"type": "string"}},
                        "required": ["home"]},
         "content_state": {"type": "object",
                           "properties": {"score": {"type": "integer", "minimum": 0}, "phase": {"type": "string", "enum": ["first", "second"]},
                                          "kickoff": {"type": "number", "format": "date"},
                                          "scorers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}},
                                                                                 "required": ["name"]}},
                                          "note": {"type": ["string", "null"]}},
                           "required": ["score"]}}
        """
    static let activity = "notification.ios.live_activity"

    static func push(_ activity: String, audience: String = #""all""#) -> String {
        #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": \#(activity)}}}"#
    }

    static func start(_ name: String, type: String = "MatchAttributes", attributes: String = #"{"home": "Foxes"}"#, content: String = #"{"score": 0}"#) -> String {
        Self.push(#"{"event": "start", "name": "\#(name)", "attributes_type": "\#(type)", "attributes": \#(attributes), "content_state": \#(content), "alert": {"title": "Kick-off"}}"#)
    }

    static func update(_ name: String, content: String, event: String = "update", hint: String? = nil) -> String {
        let hint = hint.map { #", "attributes_type": "\#($0)""# } ?? ""
        return Self.push(#"{"event": "\#(event)", "name": "\#(name)", "content_state": \#(content)\#(hint)}"#)
    }

    /// `details.path` and `details.error` of an answer.
    static func details(_ body: [String: Any]) -> (path: String?, error: String) {
        let details = body["details"] as? [String: Any]
        return (details?["path"] as? String, details?["error"] as? String ?? "")
    }

    static func count(_ table: String, in database: Database) async throws -> Int {
        try await database.query("SELECT count(*)::int FROM \(unescaped: table)", logger: TestDatabase.logger)
            .decode(Int.self).reduce(into: []) { $0.append($1) }.first ?? -1
    }

    @Test func typesAreDeclaredByTheirSchemasOrAnExampleReadListedAndDeleted() async throws {
        try await APIHarness.run { harness, client in
            let created = try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas)
            #expect(created.status == .created)
            #expect(created.body["activities_in_flight"] as? Int == 0)
            #expect((created.body["breaking_changes"] as? [String])?.isEmpty == true)
            let type = try #require(created.body["live_activity_type"] as? [String: Any])
            #expect(type["attributes_type"] as? String == "MatchAttributes")
            #expect((type["content_state"] as? [String: Any])?["required"] as? [String] == ["score"])
            let again = try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas)
            #expect(again.status == .ok)

            // From one example: integers, numbers, null as an optional key of any type, nested objects and arrays.
            let example = #"{"example": {"attributes": {"order": "A1", "items": [1, 2]}, "content_state": {"eta": 12.5, "step": 2, "courier": null, "stop": {"city": "Bonn"}}}}"#
            #expect(try await client.send(.put, "/api/live_activity_types/OrderAttributes", harness.master(), example).status == .created)
            let derived = try await client.send(.get, "/api/live_activity_types/OrderAttributes", harness.master())
            #expect(derived.status == .ok)
            let order = try #require(derived.body["live_activity_type"] as? [String: Any])
            #expect(order["created_at"] is String && order["updated_at"] is String)
            let content = try #require(order["content_state"] as? [String: Any])
            let properties = try #require(content["properties"] as? [String: [String: Any]])
            #expect(properties["eta"]?["type"] as? String == "number")
            #expect(properties["step"]?["type"] as? String == "integer")
            #expect(properties["courier"]?.isEmpty == true, "null derives an optional key of any type")
            #expect(properties["stop"]?["type"] as? String == "object")
            #expect(content["required"] as? [String] == ["eta", "step", "stop"])
            let items = ((order["attributes"] as? [String: Any])?["properties"] as? [String: [String: Any]])?["items"]?["items"]
            #expect((items as? [String: Any])?["type"] as? String == "integer")

            let listed = try await client.send(.get, "/api/live_activity_types", harness.master())
            #expect(listed.status == .ok)
            #expect((listed.body["live_activity_types"] as? [[String: Any]])?.map { $0["attributes_type"] as? String } == ["MatchAttributes", "OrderAttributes"])
            #expect((listed.body["seen_without_schema"] as? [String])?.isEmpty == true)
            // Another app sees none of them.
            let other = try await client.send(.get, "/api/live_activity_types", harness.master(harness.orders))
            #expect((other.body["live_activity_types"] as? [Any])?.isEmpty == true)
            #expect(try await client.send(.get, "/api/live_activity_types/MatchAttributes", harness.master(harness.orders)).status == .notFound)

            let missing = try await client.send(.get, "/api/live_activity_types/NoSuchAttributes", harness.master())
            #expect(missing.status == .notFound)
            #expect(missing.body["error_code"] as? Int == 40401)
            #expect(try await client.send(.delete, "/api/live_activity_types/OrderAttributes", harness.master()).status == .noContent)
            #expect(try await client.send(.delete, "/api/live_activity_types/OrderAttributes", harness.master()).status == .notFound)
            #expect(try await client.send(.get, "/api/live_activity_types/OrderAttributes", harness.master()).status == .notFound)
            let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            #expect(try await client.send(.get, "/api/live_activity_types", appSecret).status == .unauthorized)
        }
    }

    /// A start is checked by its `attributes_type`, attributes and content: each mismatch is a 400 from push and
    /// validate alike, naming the path and what was expected, and nothing is queued (not even a batch's good pushes).
    @Test func aStartItsTypeRefusesIsNeitherQueuedNorValid() async throws {
        try await APIHarness.run { harness, client in
            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas).status == .created)
            let unixKickoff = Int(harness.clock.now.timeIntervalSince1970) + 3600
            let refused: [(push: String, path: String, error: String)] = [
                (Self.start("m", attributes: #"{"away": "Tigers"}"#), "\(Self.activity).attributes.home", "home is required"),
                (Self.start("m", attributes: #"{"home": "\#(String(repeating: "F", count: 21))"}"#), "\(Self.activity).attributes.home", "at most 20"),
                (Self.start("m", content: #"{"score": "1"}"#), "\(Self.activity).content_state.score", "expected an integer, got a string"),
                (Self.start("m", content: #"{"score": 1.5}"#), "\(Self.activity).content_state.score", "fraction"),
                (Self.start("m", content: #"{"score": -1}"#), "\(Self.activity).content_state.score", "at least 0"),
                (Self.start("m", content: #"{"score": 0, "phase": "third"}"#), "\(Self.activity).content_state.phase", "expected one of"),
                (Self.start("m", content: #"{"score": 0, "scorers": [{"name": "A"}, {"name": 9}]}"#), "\(Self.activity).content_state.scorers[1].name", "expected a string"),
                (Self.start("m", content: #"{"score": 0, "note": 3}"#), "\(Self.activity).content_state.note", "expected a string or null"),
                (Self.start("m", content: #"{"score": 0, "kickoff": \#(unixKickoff)}"#), "\(Self.activity).content_state.kickoff", "looks like Unix time"),
                (Self.start("m", content: #"{"phase": "first"}"#), "\(Self.activity).content_state.score", "score is required"),
                ("[\(Self.start("a")), \(Self.start("b", content: "{}"))]", "[1].\(Self.activity).content_state.score", "score is required"),
            ]
            for (push, path, error) in refused {
                for route in ["/api/push", "/api/push/validate"] {
                    let answer = try await client.send(.post, route, harness.master(), push)
                    #expect(answer.status == .badRequest, "\(route) \(push)")
                    #expect(answer.body["error_code"] as? Int == 40000)
                    let details = Self.details(answer.body)
                    #expect(details.path == path, "\(route) \(push)")
                    #expect(details.error.contains(error) && details.error.contains("MatchAttributes"), "\(details.error)")
                }
            }
            #expect(try await Self.count("pushes", in: harness.database) == 0)
            #expect((try await client.send(.get, "/api/pushes", harness.master()).body["pushes"] as? [Any])?.isEmpty == true)

            // What the type allows: extra keys, an optional key left out or null, a date since 2001.
            let kickoff = Int(harness.clock.now.timeIntervalSinceReferenceDate) + 3600
            let good = Self.start("m", attributes: #"{"home": "Foxes", "stadium": "Den"}"#,
                                  content: #"{"score": 0, "note": null, "kickoff": \#(kickoff), "scorers": [], "extra": true}"#)
            #expect(try await client.send(.post, "/api/push/validate", harness.master(), good).status == .ok)
            #expect(try await client.send(.post, "/api/push", harness.master(), good).status == .accepted)
            #expect(try await Self.count("pushes", in: harness.database) == 1)
        }
    }

    /// An update or end is checked by the type its name was last started with; the `attributes_type` hint must name
    /// that type, is what is checked when no start is on record, and is never sent to APNs. Types without a schema,
    /// and names with neither, are unchecked.
    @Test func anUpdateIsCheckedByTheTypeItsNameWasStartedWithOrItsHint() async throws {
        try await APIHarness.run { harness, client in
            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas).status == .created)
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.start("final")).status == .accepted)

            for event in ["update", "end"] {
                let answer = try await client.send(.post, "/api/push", harness.master(), Self.update("final", content: #"{"score": "two"}"#, event: event))
                #expect(answer.status == .badRequest, "\(event)")
                #expect(Self.details(answer.body).path == "\(Self.activity).content_state.score")
                #expect(Self.details(answer.body).error.contains("'MatchAttributes'"))
            }
            let validated = try await client.send(.post, "/api/push/validate", harness.master(), Self.update("final", content: "{}"))
            #expect(validated.status == .badRequest)
            #expect(Self.details(validated.body).path == "\(Self.activity).content_state.score")
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.update("final", content: #"{"score": 2}"#)).status == .accepted)

            // The hint names another type than the start's: refused, whatever the content.
            let otherHint = try await client.send(.post, "/api/push", harness.master(), Self.update("final", content: #"{"score": 3}"#, hint: "OrderAttributes"))
            #expect(otherHint.status == .badRequest)
            #expect(Self.details(otherHint.body).path == "\(Self.activity).attributes_type")
            #expect(Self.details(otherHint.body).error.contains("last started as 'MatchAttributes'"))
            // The start's type as the hint: accepted, and not in what goes to APNs.
            let hinted = try await client.send(.post, "/api/push", harness.master(), Self.update("final", content: #"{"score": 3}"#, hint: "MatchAttributes"))
            #expect(hinted.status == .accepted)
            let hintedID = try #require((hinted.body["push_ids"] as? [String])?.first.flatMap(UUID.init(uuidString:)))
            let body = try await harness.database.query("SELECT apns_body FROM pushes WHERE push_id = \(hintedID)", logger: TestDatabase.logger)
                .decode(String.self).reduce(into: []) { $0.append($1) }.first
            #expect(body?.contains("MatchAttributes") == false, "\(body ?? "no push")")

            // A hint alone, for a name Blimp sent no start of, is checked; without it the update is unchecked.
            let hintAlone = try await client.send(.post, "/api/push", harness.master(), Self.update("pushed-by-app", content: #"{"score": -1}"#, hint: "MatchAttributes"))
            #expect(hintAlone.status == .badRequest)
            #expect(Self.details(hintAlone.body).path == "\(Self.activity).content_state.score")
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.update("pushed-by-app", content: #"{"score": -1}"#)).status == .accepted)

            // A start earlier in the same request counts as the name's start.
            let batch = "[\(Self.start("semi")), \(Self.update("semi", content: #"{"score": "x"}"#))]"
            let refusedBatch = try await client.send(.post, "/api/push", harness.master(), batch)
            #expect(Self.details(refusedBatch.body).path == "[1].\(Self.activity).content_state.score")

            // A type without a schema is unchecked, and so is the name's update once its type is deleted.
            let unknown = Self.start("cup", type: "CupAttributes", attributes: #"{"anything": [1]}"#, content: #"{"score": "x"}"#)
            #expect(try await client.send(.post, "/api/push", harness.master(), unknown).status == .accepted)
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.update("cup", content: #"{"score": "y"}"#)).status == .accepted)
            #expect(try await client.send(.delete, "/api/live_activity_types/MatchAttributes", harness.master()).status == .noContent)
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.update("final", content: #"{"score": "two"}"#)).status == .accepted)
            // Another app's pushes of the same names and type are its own business.
            #expect(try await client.send(.post, "/api/push", harness.master(harness.orders), Self.start("final", content: "{}")).status == .accepted)
        }
    }

    /// Concurrent requests are read together (``PushPreparationInputs``): each is still checked against its own app's
    /// types and its own names' starts, whichever requests share its read.
    @Test func concurrentPushesOfTwoAppsAreEachCheckedAgainstTheirOwnApp() async throws {
        try await APIHarness.run { harness, client in
            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas).status == .created)
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.start("final")).status == .accepted)
            let wrong = Self.update("final", content: #"{"score": "two"}"#)
            let statuses = try await withThrowingTaskGroup(of: (Int, HTTPResponse.Status).self) { group in
                for request in 0..<60 {
                    let (app, body) = switch request % 3 {
                    case 0: (harness.scores, wrong)
                    case 1: (harness.orders, wrong)  // Orders declared no type and started no `final`.
                    default: (harness.scores, Self.update("final", content: #"{"score": 2}"#))
                    }
                    group.addTask { (request % 3, try await client.send(.post, "/api/push", harness.master(app), body).status) }
                }
                return try await group.reduce(into: [Int: [HTTPResponse.Status]]()) { $0[$1.0, default: []].append($1.1) }
            }
            #expect(statuses[0] == Array(repeating: .badRequest, count: 20))
            #expect(statuses[1] == Array(repeating: .accepted, count: 20))
            #expect(statuses[2] == Array(repeating: .accepted, count: 20))
        }
    }

    @Test func aScheduleWhosePushItsTypeRefusesIsNotCreated() async throws {
        try await APIHarness.run { harness, client in
            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas).status == .created)
            let tomorrow = AirshipDate.format(harness.clock.now.addingTimeInterval(86_400))
            func schedule(_ push: String) -> String { #"{"schedule": {"scheduled_time": "\#(tomorrow)"}, "push": \#(push)}"# }
            let refused = try await client.send(.post, "/api/schedules", harness.master(), schedule(Self.start("final", attributes: "{\"away\": \"T\"}")))
            #expect(refused.status == .badRequest)
            #expect(Self.details(refused.body).path == "push.\(Self.activity).attributes.home")
            let array = "[\(schedule(Self.start("final"))), \(schedule(Self.update("final", content: #"{"score": "x"}"#)))]"
            let refusedArray = try await client.send(.post, "/api/schedules", harness.master(), array)
            #expect(refusedArray.status == .badRequest)
            #expect(Self.details(refusedArray.body).path == "[1].push.\(Self.activity).content_state.score")
            #expect(try await Self.count("schedules", in: harness.database) == 0)
            #expect(try await client.send(.post, "/api/schedules", harness.master(), schedule(Self.start("final"))).status == .created)
        }
    }

    /// A change that could make the next update of activities in flight fail to decode is a 409 naming it, unless
    /// `?force=true`; a safe change is saved and says how many activities are in flight.
    @Test func aBreakingChangeWithActivitiesInFlightNeedsForce() async throws {
        try await APIHarness.run { harness, client in
            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas).status == .created)
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.start("final")).status == .accepted)
            // A breaking change with nothing in flight is saved, and says what it breaks.
            let narrowed = Self.matchSchemas.replacingOccurrences(of: #""maxLength": 20"#, with: #""maxLength": 10"#)
            let early = try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), narrowed)
            #expect(early.status == .ok)
            #expect(early.body["activities_in_flight"] as? Int == 0)
            #expect(early.body["breaking_changes"] as? [String] == ["attributes.home: string narrowed to max length 10"])

            // A phone reports the activity the start began.
            let channel = try await ServerAPITests.register(client, harness.scores)
            let now = Int64(harness.clock.now.timeIntervalSince1970 * 1000)
            let batch = #"{"live_activities": [{"action": "set", "type": "update_token", "id": "a1", "name": "final", "token": "\#(String(repeating: "ab", count: 32))", "start_ts_ms": \#(now), "action_ts_ms": \#(now)}]}"#
            let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            #expect(try await client.send(.put, "/api/channels/sdk/batch/\(channel)?platform=ios", appSecret, batch).status == .ok)

            let optional = narrowed.replacingOccurrences(of: #""note": {"type": ["string", "null"]}"#, with: #""note": {"type": ["string", "null"]}, "minute": {"type": "integer"}"#)
            let safe = try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), optional)
            #expect(safe.status == .ok)
            #expect(safe.body["activities_in_flight"] as? Int == 1)
            #expect((safe.body["breaking_changes"] as? [String])?.isEmpty == true)

            let required = optional.replacingOccurrences(of: #""required": ["score"]"#, with: #""required": ["score", "minute"]"#)
            let conflict = try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), required)
            #expect(conflict.status == .conflict)
            #expect(conflict.body["error_code"] as? Int == 40900)
            let error = Self.details(conflict.body).error
            #expect(error.contains("1 activities in flight") && error.contains("content_state.minute") && error.contains("force=true"), "\(error)")
            let unchanged = try await client.send(.get, "/api/live_activity_types/MatchAttributes", harness.master())
            let content = (unchanged.body["live_activity_type"] as? [String: Any])?["content_state"] as? [String: Any]
            #expect(content?["required"] as? [String] == ["score"])

            let forced = try await client.send(.put, "/api/live_activity_types/MatchAttributes?force=true", harness.master(), required)
            #expect(forced.status == .ok)
            #expect(forced.body["activities_in_flight"] as? Int == 1)
            #expect((forced.body["breaking_changes"] as? [String])?.count == 1)
            #expect((forced.body["breaking_changes"] as? [String])?.first?.hasPrefix("content_state.minute") == true)
        }
    }

    /// The types devices report push-to-start tokens for are listed until they have a schema.
    @Test func typesSeenInTheFieldWithoutASchemaAreListed() async throws {
        try await APIHarness.run { harness, client in
            let channel = try await ServerAPITests.register(client, harness.scores)
            let now = Int64(harness.clock.now.timeIntervalSince1970 * 1000)
            let entries = ["MatchAttributes", "OrderAttributes"].enumerated().map { index, type in
                #"{"action": "set", "type": "start_token", "attributes_type": "\#(type)", "token": "\#(String(repeating: "c\(index)", count: 32))", "action_ts_ms": \#(now)}"#
            }
            let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            let reported = try await client.send(.put, "/api/channels/sdk/batch/\(channel)?platform=ios", appSecret,
                                                 #"{"live_activities": [\#(entries.joined(separator: ","))]}"#)
            #expect(reported.status == .ok)
            let before = try await client.send(.get, "/api/live_activity_types", harness.master())
            #expect(before.body["seen_without_schema"] as? [String] == ["MatchAttributes", "OrderAttributes"])
            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchSchemas).status == .created)
            let after = try await client.send(.get, "/api/live_activity_types", harness.master())
            #expect(after.body["seen_without_schema"] as? [String] == ["OrderAttributes"])
            #expect((after.body["live_activity_types"] as? [Any])?.count == 1)
            let other = try await client.send(.get, "/api/live_activity_types", harness.master(harness.orders))
            #expect((other.body["seen_without_schema"] as? [String])?.isEmpty == true)
        }
    }

    /// Schemas outside the subset, nesting without bound, oversized bodies and names, examples that are not objects:
    /// each a 4xx with Airship's error body, never a 5xx.
    @Test func hostileTypesAreClearRefusals() async throws {
        try await APIHarness.run { harness, client in
            let object = #"{"type": "object"}"#
            func nested(_ depth: Int) -> String {
                (0..<depth).reduce(#"{"type": "string"}"#) { inner, _ in #"{"type": "object", "properties": {"a": \#(inner)}}"# }
            }
            func nestedExample(_ depth: Int) -> String { (0..<depth).reduce("1") { inner, _ in #"{"a": \#(inner)}"# } }
            let base = "/api/live_activity_types/MatchAttributes"
            let refused: [(method: HTTPRequest.Method, uri: String, body: String, status: HTTPResponse.Status, path: String?)] = [
                (.put, base, ##"{"attributes": {"type": "object", "properties": {"a": {"$ref": "#"}}}, "content_state": \##(object)}"##, .badRequest, "attributes.properties.a.$ref"),
                (.put, base, ##"{"attributes": {"$ref": "#/definitions/a", "definitions": {"a": {"$ref": "#/definitions/a"}}}, "content_state": \##(object)}"##, .badRequest, "attributes.$ref"),
                (.put, base, #"{"attributes": \#(object), "content_state": {"oneOf": [{"type": "object"}, {"type": "null"}]}}"#, .badRequest, "content_state.oneOf"),
                (.put, base, #"{"attributes": \#(object), "content_state": \#(nested(40))}"#, .badRequest, nil),
                (.put, base, #"{"attributes": {"type": "string"}, "content_state": \#(object)}"#, .badRequest, "attributes.type"),
                (.put, base, #"{"attributes": \#(object), "content_state": {"type": "object", "additionalProperties": {"type": "string"}}}"#, .badRequest, "content_state.additionalProperties"),
                (.put, base, #"{"attributes": \#(object), "content_state": {"type": "integer", "format": "date-time"}}"#, .badRequest, "content_state.format"),
                (.put, base, #"{"attributes": \#(object)}"#, .badRequest, "content_state"),
                (.put, base, #"{"example": {"attributes": [1], "content_state": {}}}"#, .badRequest, "example.attributes"),
                (.put, base, #"{"example": {"attributes": {}, "content_state": "state"}}"#, .badRequest, "example.content_state"),
                (.put, base, #"{"example": 5}"#, .badRequest, "example"),
                (.put, base, #"{"example": {"attributes": {}, "content_state": \#(nestedExample(40))}}"#, .badRequest, nil),
                (.put, base, #"{"example": {"attributes": {}, "content_state": {}}, "attributes": \#(object)}"#, .badRequest, "example"),
                (.put, base, "[]", .badRequest, nil),
                (.put, base, "not json", .badRequest, nil),
                (.put, "/api/live_activity_types/\(String(repeating: "T", count: 257))", #"{"example": {"attributes": {}, "content_state": {}}}"#, .badRequest, "attributes_type"),
                (.put, "/api/live_activity_types/a%00b", #"{"example": {"attributes": {}, "content_state": {}}}"#, .badRequest, "attributes_type"),
                (.get, "/api/live_activity_types/a%00b", "", .badRequest, "attributes_type"),
                (.delete, "/api/live_activity_types/a%00b", "", .badRequest, "attributes_type"),
                (.get, "/api/live_activity_types/\(String(repeating: "T", count: 2000))", "", .badRequest, "attributes_type"),
                (.put, base, #"{"attributes": \#(object), "content_state": {"type": "object", "description": "\#(String(repeating: "d", count: 2 << 20))"}}"#, .contentTooLarge, nil),
            ]
            for (method, uri, body, status, path) in refused {
                let answer = try await client.send(method, uri, harness.master(), body.isEmpty ? nil : body)
                #expect(answer.status == status, "\(method) \(uri.prefix(80)) \(body.prefix(200))")
                #expect(answer.body["ok"] as? Bool == false)
                #expect(answer.body["error_code"] as? Int == Int(status.code) * 100)
                #expect(answer.body["error"] is String)
                if let path {
                    #expect(Self.details(answer.body).path == path, "\(body.prefix(200)): \(answer.body)")
                }
                if status == .badRequest {
                    #expect(!Self.details(answer.body).error.isEmpty, "\(body.prefix(200))")
                }
            }
            #expect(try await Self.count("live_activity_types", in: harness.database) == 0)
        }
    }
}
