import BlimpCore
import Foundation
import Testing

/// Reading schema documents: what the subset accepts reads back from its canonical form unchanged, and everything
/// outside it is refused with the path of the offending keyword.
@Suite struct ActivitySchemaParseTests {
    static let full = #"""
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Score", "type": "object",
         "properties": {
           "score": {"type": "integer", "minimum": 0, "maximum": 1e3, "description": "Points"},
           "ratio": {"type": ["number", "null"], "enum": [0.5, 1, null]},
           "phase": {"type": "string", "enum": ["first", "second"], "minLength": 1, "maxLength": 10},
           "endsAt": {"type": "number", "format": "date", "examples": [800000000]},
           "live": {"type": "boolean", "default": true},
           "nothing": {"type": "null"},
           "extra": {},
           "players": {"type": "array", "minItems": 1, "maxItems": 22, "items": {
             "type": ["object", "null"], "properties": {"name": {"type": "string"}}, "required": ["name"],
             "additionalProperties": false}}
         },
         "required": ["players", "score"]}
        """#

    @Test func aFullDocumentReadsBackFromItsCanonicalForm() throws {
        let schema = try SchemaText.schema(Self.full)
        #expect(try ActivitySchema.parse(schema.json, at: "content_state") == schema)
        #expect(try ActivitySchema.parse(try SchemaText.json(schema.json.text), at: "x") == schema)
    }

    @Test func theModelIsWhatAFormWalks() throws {
        let schema = try SchemaText.schema(Self.full)
        #expect(schema.title == "Score")
        guard case .object(let rules) = schema.kind else { Issue.record("not an object"); return }
        #expect(rules.properties.map(\.name) == ["score", "ratio", "phase", "endsAt", "live", "nothing", "extra", "players"])
        #expect(rules.properties.filter(\.isRequired).map(\.name) == ["score", "players"])
        #expect(rules.allowsAdditionalProperties)
        let score = try #require(rules.property("score")?.schema)
        #expect(score.kind == .integer(.init(minimum: JSONNumber(0), maximum: JSONNumber("1e3"))))
        #expect(score.description == "Points")
        let ratio = try #require(rules.property("ratio")?.schema)
        #expect(ratio.isNullable)
        #expect(ratio.enumValues == [.number("0.5"), .number("1")])
        #expect(rules.property("phase")?.schema.enumValues == [.string("first"), .string("second")])
        #expect(rules.property("endsAt")?.schema.isDate == true)
        #expect(rules.property("nothing")?.schema.kind == .null)
        #expect(rules.property("extra")?.schema == .any)
        guard case .array(let players) = rules.property("players")?.schema.kind else { Issue.record("not an array"); return }
        #expect(players.minItems == 1 && players.maxItems == 22)
        #expect(players.items.isNullable)
        guard case .object(let player) = players.items.kind else { Issue.record("not an object"); return }
        #expect(!player.allowsAdditionalProperties)
    }

    @Test func theCanonicalFormIsPlainJSONSchema() throws {
        let schema = try SchemaText.schema(
            #"{"type": "object", "required": ["a"], "properties": {"a": {"enum": ["x"], "type": ["string", "null"]}, "b": {"type": "array"}}}"#)
        #expect(schema.json.text == #"{"type":"object","properties":{"a":{"type":["string","null"],"enum":["x",null]},"b":{"type":"array","items":{}}},"required":["a"],"additionalProperties":true}"#)
    }

    @Test(arguments: [
        (##"{"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}}"##, "content_state.properties.a.$ref", "outside the subset Blimp checks: $ref"),
        (#"{"type": "object", "oneOf": [{}]}"#, "content_state.oneOf", "outside the subset Blimp checks: oneOf"),
        (#"{"type": "object", "anyOf": []}"#, "content_state.anyOf", "outside the subset Blimp checks: anyOf"),
        (#"{"type": "object", "allOf": []}"#, "content_state.allOf", "outside the subset Blimp checks: allOf"),
        (#"{"type": "object", "if": {}}"#, "content_state.if", "outside the subset Blimp checks: if"),
        (#"{"type": "object", "patternProperties": {}}"#, "content_state.patternProperties", "outside the subset Blimp checks: patternProperties"),
        (#"{"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}"#, "content_state.properties.a.pattern", "outside the subset Blimp checks: pattern"),
        (#"{"type": "object", "properties": {"a": {"const": 1}}}"#, "content_state.properties.a.const", "outside the subset Blimp checks: const"),
        (#"{"type": "object", "properties": {"a": {"type": "number", "format": "date-time"}}}"#, "content_state.properties.a.format", #"outside the subset Blimp checks: format "date-time" (only "date")"#),
        (#"{"type": "object", "properties": {"a": {"type": "string", "format": "date"}}}"#, "content_state.properties.a.format", #"format does not apply to type "string""#),
        (#"{"type": "object", "properties": {"score": {"type": ["string", "integer"]}}}"#, "content_state.properties.score.type", #"outside the subset Blimp checks: a type array is one type, optionally with "null" (a Swift optional)"#),
        (#"{"type": "object", "properties": {"score": {"type": "float"}}}"#, "content_state.properties.score.type", #"expected one of "object", "array", "string", "integer", "number", "boolean", "null""#),
        (#"{"type": "object", "properties": {"a": {}}, "required": ["b"]}"#, "content_state.required[0]", "'b' is not declared in properties"),
        (#"{"type": "object", "properties": {"a": {}}, "required": ["a", "a"]}"#, "content_state.required[1]", "'a' is listed twice"),
        (#"{"type": "object", "additionalProperties": {"type": "string"}}"#, "content_state.additionalProperties", "outside the subset Blimp checks: additionalProperties is true or false"),
        (#"{"type": "object", "properties": {"a": {"minimum": 1}}}"#, "content_state.properties.a.minimum", "minimum needs a type to apply to"),
        (#"{"type": "object", "properties": {"a": {"type": "string", "minimum": 1}}}"#, "content_state.properties.a.minimum", #"minimum does not apply to type "string""#),
        (#"{"type": "object", "properties": {"a": {"type": "integer", "minimum": 2, "maximum": 1}}}"#, "content_state.properties.a.minimum", "minimum is greater than maximum"),
        (#"{"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}"#, "content_state.properties.a.minLength", "expected a non-negative integer, not -1"),
        (#"{"type": "object", "properties": {"a": {"type": "integer", "enum": [1.5]}}}"#, "content_state.properties.a.enum[0]", "1.5 is not an integer"),
        (#"{"type": "object", "properties": {"a": {"type": "string", "enum": []}}}"#, "content_state.properties.a.enum", "enum needs at least one value"),
        (#"{"type": "object", "properties": {"a": {"type": "string", "enum": [null]}}}"#, "content_state.properties.a.enum[0]", "expected a string, not null"),
        (#"{"type": "object", "properties": {"a": true}}"#, "content_state.properties.a", "outside the subset Blimp checks: a boolean schema (use {} for any value)"),
        (#"{"type": "object", "title": 3}"#, "content_state.title", "expected a string, not a number"),
        (#"{"type": "array", "items": {}}"#, "content_state.type", #"the top-level schema must be of type "object" (not nullable): ActivityKit decodes attributes and content_state as a struct"#),
        (#"{"type": ["object", "null"]}"#, "content_state.type", #"the top-level schema must be of type "object" (not nullable): ActivityKit decodes attributes and content_state as a struct"#),
        ("[]", "content_state", "expected a schema object, not an array"),
    ])
    func outsideTheSubsetIsRefusedNamingTheKeyword(document: String, path: String, message: String) throws {
        #expect(try SchemaText.parseRefusal(document) == InvalidField(path, message))
    }

    /// The parser refuses duplicate keys, but a value built in code may have them.
    @Test func aKeywordGivenTwiceIsRefused() {
        let twice = RawJSON.object([.init("type", .string("object")), .init("type", .string("object"))])
        #expect(SchemaText.refusal { () throws(InvalidField) in _ = try ActivitySchema.parse(twice, at: "attributes") }
            == InvalidField("attributes.type", "the keyword appears twice"))
    }

    /// The parser refuses such literals, but a value built in code may carry one.
    @Test func aBoundBeyondADoubleIsRefused() {
        let schema = RawJSON.object([.init("type", .string("object")), .init("properties", .object([
            .init("n", .object([.init("type", .string("number")), .init("maximum", .number("1e400"))]))]))])
        #expect(SchemaText.refusal { () throws(InvalidField) in _ = try ActivitySchema.parse(schema, at: "attributes") }
            == InvalidField("attributes.properties.n.maximum", "1e400 is too large for a Double"))
    }

    /// `levels` schemas nested through `properties`, the top-level one included.
    static func nested(levels: Int) -> String {
        (1..<levels).reduce(#"{"type": "object"}"#) { inner, _ in #"{"type": "object", "properties": {"a": \#(inner)}}"# }
    }

    @Test func sixteenLevelsAreAcceptedAndSeventeenRefused() throws {
        #expect(try SchemaText.parseRefusal(Self.nested(levels: 16)) == nil)
        let refusal = try #require(try SchemaText.parseRefusal(Self.nested(levels: 17)))
        #expect(refusal.path == "content_state" + String(repeating: ".properties.a", count: 16))
        #expect(refusal.message == "schemas nest at most 16 levels deep")
        let items = (1..<17).reduce(#"{"type": "string"}"#) { inner, _ in #"{"type": "array", "items": \#(inner)}"# }
        #expect(try SchemaText.parseRefusal(#"{"type": "object", "properties": {"a": \#(items)}}"#)?.message == "schemas nest at most 16 levels deep")
    }

    @Test func aThousandSchemasAreAcceptedAndOneMoreRefused() throws {
        func document(properties: Int) -> String {
            #"{"type": "object", "properties": {\#((0..<properties).map { #""p\#($0)": {"type": "string"}"# }.joined(separator: ","))}}"#
        }
        #expect(try SchemaText.parseRefusal(document(properties: 999)) == nil)
        #expect(try SchemaText.parseRefusal(document(properties: 1000)) == InvalidField(
            "content_state.properties.p999", "a schema document has at most 1000 schemas"))
    }
}
