import BlimpCore
import Foundation
import Testing

/// Deriving a schema from one example, by the rules in ``ActivitySchema/derived(from:at:)``'s documentation.
@Suite struct ActivitySchemaDerivedTests {
    func derived(_ example: String) throws -> ActivitySchema {
        try ActivitySchema.derived(from: try SchemaText.json(example), at: "content_state")
    }

    func refusal(_ example: String) throws -> InvalidField? {
        let json = try SchemaText.json(example)
        return SchemaText.refusal { () throws(InvalidField) in _ = try ActivitySchema.derived(from: json, at: "content_state") }
    }

    @Test func eachRuleOfTheDerivation() throws {
        let schema = try self.derived(#"""
            {"score": 3, "ratio": 0.5, "big": 1e3, "whole": 3.0, "huge": 99999999999999999999, "name": "x", "live": true, "note": null,
             "players": [{"name": "a", "score": 1}, {"name": "b", "score": 2}], "mixed": [1, "a"], "none": [],
             "home": {"city": "Oslo", "coach": null}}
            """#)
        let expected = try SchemaText.schema(#"""
            {"type": "object", "properties": {
              "score": {"type": "integer"}, "ratio": {"type": "number"}, "big": {"type": "number"},
              "whole": {"type": "number"}, "huge": {"type": "number"}, "name": {"type": "string"}, "live": {"type": "boolean"}, "note": {},
              "players": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "score": {"type": "integer"}}, "required": ["name", "score"]}},
              "mixed": {"type": "array", "items": {}}, "none": {"type": "array"},
              "home": {"type": "object", "properties": {"city": {"type": "string"}, "coach": {}}, "required": ["city"]}},
             "required": ["score", "ratio", "big", "whole", "huge", "name", "live", "players", "mixed", "none", "home"]}
            """#)
        #expect(schema == expected)
        #expect(try ActivitySchema.parse(schema.json, at: "content_state") == schema)
    }

    @Test func theExampleContentPassesItsDerivedSchema() throws {
        let example = try SchemaText.json(#"{"score": 3, "players": [{"name": "a"}], "note": null}"#)
        let schema = try ActivitySchema.derived(from: example, at: "content_state")
        #expect(SchemaText.refusal { () throws(InvalidField) in try schema.check(example, at: "content_state", now: Date()) } == nil)
    }

    @Test func elementsThatDifferGiveItemsOfAnyType() throws {
        let schema = try self.derived(#"{"players": [{"name": "a"}, {"name": "b", "score": 1}]}"#)
        guard case .object(let rules) = schema.kind, case .array(let players) = rules.property("players")?.schema.kind else {
            Issue.record("not derived as an array")
            return
        }
        #expect(players.items == .any)
    }

    @Test func anExampleIsAnObject() throws {
        #expect(SchemaText.refusal { () throws(InvalidField) in _ = try ActivitySchema.derived(from: .array([]), at: "attributes") }
            == InvalidField("attributes", "an example is an object, not an array"))
    }

    @Test func theLimitsOfADocumentHold() throws {
        let deep = (1..<17).reduce("1") { inner, _ in #"{"a": \#(inner)}"# }
        #expect(try self.refusal(deep) == InvalidField("content_state" + String(repeating: ".a", count: 16), "an example nests at most 16 levels deep"))
        #expect(try self.refusal((1..<16).reduce("1") { inner, _ in #"{"a": \#(inner)}"# }) == nil)

        let wide = #"{\#((0..<1000).map { #""k\#($0)": 1"# }.joined(separator: ","))}"#
        #expect(try self.refusal(wide) == InvalidField("content_state.k999", "an example derives at most 1000 schemas"))
        // Identical elements count once: 2,000 of them derive to three schemas.
        let long = #"{"list": [\#(Array(repeating: #"{"x": 1}"#, count: 2000).joined(separator: ","))]}"#
        #expect(try self.refusal(long) == nil)
    }
}
