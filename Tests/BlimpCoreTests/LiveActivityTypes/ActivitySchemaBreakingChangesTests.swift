import BlimpCore
import Testing

/// Each kind of change that could refuse content the old schema accepts, and the widenings that cannot.
@Suite struct ActivitySchemaBreakingChangesTests {
    /// The changes from `old` to `new`, each a schema of `content_state` given by its properties (and `required`).
    func changes(_ old: String, _ new: String) throws -> [String] {
        func schema(_ body: String) throws -> ActivitySchema { try SchemaText.schema(#"{"type": "object", \#(body)}"#) }
        return try schema(new).breakingChanges(from: try schema(old))
    }

    @Test(arguments: [
        (#""properties": {}"#, #""properties": {"score": {}}, "required": ["score"]"#, "score: a new required key"),
        (#""properties": {"score": {}}"#, #""properties": {"score": {}}, "required": ["score"]"#, "score: now required"),
        (#""properties": {"n": {"type": "number"}}"#, #""properties": {"n": {"type": "integer"}}"#, "n: number narrowed to integer"),
        (#""properties": {"n": {"type": ["string", "null"]}}"#, #""properties": {"n": {"type": "string"}}"#, "n: no longer nullable"),
        (#""properties": {"n": {}}"#, #""properties": {"n": {"type": ["string", "null"]}}"#, "n: any value narrowed to string or null"),
        (#""properties": {"n": {"type": "string"}}"#, #""properties": {"n": {"type": "boolean"}}"#, "n: type changed from string to boolean"),
        (#""properties": {"n": {"type": "null"}}"#, #""properties": {"n": {"type": "string"}}"#, "n: type changed from null to string"),
        (#""properties": {"n": {"type": "integer", "minimum": 0}}"#, #""properties": {"n": {"type": "integer", "minimum": 1}}"#, "n: integer narrowed to minimum 1"),
        (#""properties": {"n": {"type": "integer"}}"#, #""properties": {"n": {"type": "integer", "maximum": 9}}"#, "n: integer narrowed to maximum 9"),
        (#""properties": {"n": {"type": "number", "maximum": 10}}"#, #""properties": {"n": {"type": "number", "maximum": 9.5}}"#, "n: number narrowed to maximum 9.5"),
        (#""properties": {"s": {"type": "string", "minLength": 1}}"#, #""properties": {"s": {"type": "string", "minLength": 2}}"#, "s: string narrowed to min length 2"),
        (#""properties": {"s": {"type": "string"}}"#, #""properties": {"s": {"type": "string", "maxLength": 10}}"#, "s: string narrowed to max length 10"),
        (#""properties": {"s": {"type": "string"}}"#, #""properties": {"s": {"type": "string", "enum": ["a", "b"]}}"#, #"s: string narrowed to enum "a", "b""#),
        (#""properties": {"s": {"type": "string", "enum": ["a", "b", "c"]}}"#, #""properties": {"s": {"type": "string", "enum": ["a"]}}"#, #"s: enum values removed: "b", "c""#),
        (#""properties": {"n": {"type": "number", "enum": [1, 2]}}"#, #""properties": {"n": {"type": "number", "enum": [1.0]}}"#, "n: enum values removed: 2"),
        (#""properties": {"l": {"type": "array", "minItems": 1}}"#, #""properties": {"l": {"type": "array", "minItems": 2}}"#, "l: array narrowed to min items 2"),
        (#""properties": {"l": {"type": "array"}}"#, #""properties": {"l": {"type": "array", "maxItems": 5}}"#, "l: array narrowed to max items 5"),
        (#""properties": {}"#, #""properties": {}, "additionalProperties": false"#, "additional keys now refused"),
        (#""properties": {"a": {}}, "additionalProperties": false"#, #""properties": {}, "additionalProperties": false"#, "a: removed, and undeclared keys are refused"),
        (#""properties": {"t": {"type": "number"}}"#, #""properties": {"t": {"type": "number", "format": "date"}}"#, "t: number narrowed to a date (seconds since 2001-01-01)"),
        (#""properties": {"p": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}"#,
         #""properties": {"p": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}}}}"#,
         "p[].name: string narrowed to max length 10"),
    ])
    func eachNarrowingIsNamedWithItsPath(old: String, new: String, change: String) throws {
        #expect(try self.changes(old, new) == [change])
    }

    @Test(arguments: [
        (#""properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}}"#, #""properties": {"n": {"type": "number", "minimum": 0, "maximum": 6}}"#),
        (#""properties": {"n": {"type": "string"}}"#, #""properties": {"n": {"type": ["string", "null"]}}"#),
        (#""properties": {"n": {"type": "string"}}"#, #""properties": {"n": {}}"#),
        (#""properties": {"n": {"type": "null"}}"#, #""properties": {"n": {"type": ["integer", "null"]}}"#),
        (#""properties": {"n": {}}, "required": ["n"]"#, #""properties": {"n": {}}"#),
        (#""properties": {"s": {"type": "string", "minLength": 2, "maxLength": 3, "enum": ["ab"]}}"#, #""properties": {"s": {"type": "string", "minLength": 1, "enum": ["ab", "cd"]}}"#),
        (#""properties": {"n": {"type": "number", "enum": [1, 2]}}"#, #""properties": {"n": {"type": "number", "enum": [2.0, 1e0]}}"#),
        (#""properties": {"l": {"type": "array", "minItems": 2, "maxItems": 3}}"#, #""properties": {"l": {"type": "array"}}"#),
        (#""properties": {"t": {"type": "integer", "format": "date"}}"#, #""properties": {"t": {"type": "number"}}"#),
        (#""properties": {"a": {}}, "additionalProperties": false"#, #""properties": {"a": {}, "b": {"type": "string"}}"#),
        (#""properties": {"a": {}}"#, #""properties": {}"#),
    ])
    func wideningIsSafe(old: String, new: String) throws {
        #expect(try self.changes(old, new) == [])
    }

    @Test func everyChangeIsListed() throws {
        #expect(try self.changes(
            #""properties": {"a": {"type": "integer"}, "b": {"type": "string"}}"#,
            #""properties": {"a": {"type": "string"}, "b": {"type": "string", "maxLength": 3}, "c": {}}, "required": ["a", "c"]"#)
            == ["a: now required", "a: type changed from integer to string", "b: string narrowed to max length 3", "c: a new required key"])
    }
}
