import BlimpCore
import Foundation
import Testing

/// Which type each Live Activity push is checked against, and the paths of what it refuses.
@Suite struct LiveActivityTypeRulesTests {
    /// A type whose attributes need a string `venue` and whose content state needs an integer `score` from 0.
    static let match = LiveActivityType(
        name: "MatchAttributes",
        attributes: try! SchemaText.schema(#"{"type": "object", "properties": {"venue": {"type": "string"}}, "required": ["venue"]}"#),
        contentState: try! SchemaText.schema(
            #"{"type": "object", "properties": {"score": {"type": "integer", "minimum": 0}}, "required": ["score"]}"#))
    static let inputs = LiveActivityTypeRules.Inputs(types: ["MatchAttributes": Self.match])
    static let start = #""event": "start", "name": "m1", "attributes_type": "MatchAttributes", "alert": {"body": "Kick-off"}"#

    /// The refusal of the request body `text` (one push object or an array), checked with `inputs`.
    func refusal(_ text: String, inputs: LiveActivityTypeRules.Inputs = Self.inputs) throws -> InvalidField? {
        let json = try SchemaText.json(text)
        let pushes = try Push.pushes(in: json)
        let paths = pushes.indices.map { json.isArray ? "[\($0)]." : "" }
        return SchemaText.refusal { () throws(InvalidField) in
            try LiveActivityTypeRules.check(pushes, paths: paths, inputs: inputs, now: Date())
        }
    }

    func push(_ fields: String) -> String {
        #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {\#(fields)}}}}"#
    }

    @Test func aStartIsCheckedByItsAttributesType() throws {
        #expect(try self.refusal(self.push(Self.start + #", "attributes": {"venue": "Anfield"}, "content_state": {"score": 0}"#)) == nil)
        let wrongState = try self.refusal(self.push(Self.start + #", "attributes": {"venue": "Anfield"}, "content_state": {"score": "0"}"#))
        #expect(wrongState?.path == "notification.ios.live_activity.content_state.score")
        #expect(wrongState?.message.contains("MatchAttributes") == true)
        let missingVenue = try self.refusal(self.push(Self.start + #", "attributes": {"city": "Liverpool"}, "content_state": {"score": 0}"#))
        #expect(missingVenue?.path.hasPrefix("notification.ios.live_activity.attributes") == true, "\(String(describing: missingVenue))")
        // A type without a schema is not checked.
        let undeclared = Self.start.replacingOccurrences(of: "MatchAttributes", with: "OtherAttributes")
        #expect(try self.refusal(self.push(undeclared + #", "attributes": {"x": 1}, "content_state": {"score": "any"}"#)) == nil)
    }

    @Test func anUpdateIsCheckedByTheTypeItsNameWasStartedWith() throws {
        let started = LiveActivityTypeRules.Inputs(types: Self.inputs.types, startedTypes: ["m1": "MatchAttributes"])
        let update = self.push(#""event": "update", "name": "m1", "content_state": {"score": -1}"#)
        #expect(try self.refusal(update, inputs: started)?.path == "notification.ios.live_activity.content_state.score")
        // Without a start on record nothing says what it is, unless the update names its type.
        #expect(try self.refusal(update) == nil)
        let hinted = self.push(#""event": "update", "name": "m1", "attributes_type": "MatchAttributes", "content_state": {"score": -1}"#)
        #expect(try self.refusal(hinted)?.path == "notification.ios.live_activity.content_state.score")
        // A hint must be the type the name was started with.
        let otherHint = self.push(#""event": "end", "name": "m1", "attributes_type": "RaceAttributes""#)
        let refused = try self.refusal(otherHint, inputs: started)
        #expect(refused?.path == "notification.ios.live_activity.attributes_type")
        #expect(refused?.message.contains("'m1' was last started as 'MatchAttributes'") == true)
        // An end's content state is optional, and checked when given.
        #expect(try self.refusal(self.push(#""event": "end", "name": "m1""#), inputs: started) == nil)
        #expect(try self.refusal(self.push(#""event": "end", "name": "m1", "content_state": {}"#), inputs: started)?.path
            == "notification.ios.live_activity.content_state.score")
    }

    @Test func aStartEarlierInTheRequestTypesTheUpdatesAfterIt() throws {
        let batch = "[" + self.push(Self.start + #", "attributes": {"venue": "Anfield"}, "content_state": {"score": 0}"#) + ", "
            + self.push(#""event": "update", "name": "m1", "content_state": {"score": 1.5}"#) + "]"
        #expect(try self.refusal(batch)?.path == "[1].notification.ios.live_activity.content_state.score")
    }

    @Test func theLookupsAreTheNamesAndTheTypesNamed() throws {
        let pushes = try Push.pushes(in: try SchemaText.json("[" + self.push(Self.start + #", "attributes": {"venue": "A"}, "content_state": {}"#) + ", "
            + self.push(#""event": "update", "name": "m2", "attributes_type": "RaceAttributes", "content_state": {}"#) + "]"))
        let lookups = LiveActivityTypeRules.lookups(in: pushes)
        #expect(lookups.names == ["m1", "m2"] && lookups.types == ["MatchAttributes", "RaceAttributes"])
    }

    @Test func aTypeIsDeclaredBySchemasOrByAnExample() throws {
        let declared = try LiveActivityType.parse(
            try SchemaText.json(#"{"attributes": {"type": "object"}, "content_state": {"type": "object", "properties": {"n": {"type": "integer"}}}}"#),
            name: "T")
        #expect(declared.contentState.json.text == #"{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":true}"#)
        let derived = try LiveActivityType.parse(
            try SchemaText.json(#"{"example": {"attributes": {"venue": "A"}, "content_state": {"score": 1, "minute": null}}}"#), name: "T")
        func contentRefusal(_ text: String) throws -> InvalidField? {
            let json = try SchemaText.json(text)
            return SchemaText.refusal { () throws(InvalidField) in try derived.contentState.check(json, at: "content_state", now: Date()) }
        }
        #expect(try contentRefusal(#"{"score": 2, "minute": "any value"}"#) == nil)
        #expect(try contentRefusal(#"{"score": 1.5}"#)?.path == "content_state.score")
        #expect(try contentRefusal(#"{"minute": 3}"#)?.path == "content_state.score")

        func refusal(_ text: String, name: String = "T") throws -> InvalidField? {
            let json = try SchemaText.json(text)
            return SchemaText.refusal { () throws(InvalidField) in _ = try LiveActivityType.parse(json, name: name) }
        }
        #expect(try refusal(#"{"content_state": {"type": "object"}}"#)?.path == "attributes")
        #expect(try refusal(#"{"example": {"attributes": {}, "content_state": {}}, "attributes": {"type": "object"}}"#)?.path == "example")
        #expect(try refusal(#"{"example": {"attributes": [], "content_state": {}}}"#)?.path.hasPrefix("example.attributes") == true)
        #expect(try refusal(#"[]"#) != nil)
        #expect(try refusal(#"{"attributes": {"type": "object"}, "content_state": {"type": "object"}}"#, name: String(repeating: "T", count: 300))?.path
            == "attributes_type")
    }
}
