import BlimpCore
import Foundation
import Testing

/// Checking content against a schema: the first mismatch, with its exact path inside the value and what was expected.
@Suite struct ActivitySchemaCheckTests {
    /// 2026-11-26 00:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_795_651_200)
    static let schema = #"""
        {"type": "object", "additionalProperties": false, "required": ["score", "players"], "properties": {
          "score": {"type": "integer", "minimum": 0, "maximum": 100},
          "ratio": {"type": "number", "enum": [0.5, 1]},
          "phase": {"type": ["string", "null"], "enum": ["first", "second"]},
          "name": {"type": "string", "minLength": 2, "maxLength": 4},
          "live": {"type": "boolean"},
          "endsAt": {"type": "integer", "format": "date"},
          "anything": {},
          "players": {"type": "array", "maxItems": 3, "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "score": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}}}
        }}
        """#

    func refusal(_ content: String) throws -> InvalidField? {
        let schema = try SchemaText.schema(Self.schema)
        let value = try SchemaText.json(content)
        return SchemaText.refusal { () throws(InvalidField) in try schema.check(value, at: "content_state", now: Self.now) }
    }

    @Test func matchingContentPasses() throws {
        #expect(try self.refusal(#"{"score": 3, "players": []}"#) == nil)
        #expect(try self.refusal(#"""
            {"score": 100, "ratio": 1.0, "phase": null, "name": "éé", "live": false, "endsAt": 817000000,
             "anything": [{"x": null}], "players": [{"name": "a", "score": 1e2, "tags": ["x"]}, {"name": "b", "extra": 1}]}
            """#) == nil)
    }

    @Test(arguments: [
        (#"{"score": "3", "players": []}"#, "content_state.score", "expected an integer, got a string"),
        (#"{"score": 1.5, "players": []}"#, "content_state.score", "expected an integer, got 1.5, which has a fraction"),
        (#"{"score": 1e30, "players": []}"#, "content_state.score", "expected an integer, got 1e30, outside the 64-bit range"),
        (#"{"score": 99999999999999999999, "players": []}"#, "content_state.score", "expected an integer, got 99999999999999999999, outside the 64-bit range"),
        (#"{"score": null, "players": []}"#, "content_state.score", "expected an integer, got null"),
        (#"{"players": []}"#, "content_state.score", "score is required"),
        (#"{"score": 3, "players": [], "other": 1}"#, "content_state.other", "the key 'other' is not declared in the schema, which allows no other keys"),
        (#"{"score": -1, "players": []}"#, "content_state.score", "expected at least 0, got -1"),
        (#"{"score": 101, "players": []}"#, "content_state.score", "expected at most 100, got 101"),
        (#"{"score": 1, "ratio": 0.25, "players": []}"#, "content_state.ratio", "expected one of 0.5, 1, got 0.25"),
        (#"{"score": 1, "phase": "third", "players": []}"#, "content_state.phase", #"expected one of "first", "second", got "third""#),
        (#"{"score": 1, "phase": 2, "players": []}"#, "content_state.phase", "expected a string or null, got a number"),
        (#"{"score": 1, "name": "a", "players": []}"#, "content_state.name", "expected a string of at least 2 characters (Unicode scalars), got 1"),
        (#"{"score": 1, "name": "abcde", "players": []}"#, "content_state.name", "expected a string of at most 4 characters (Unicode scalars), got 5"),
        (#"{"score": 1, "live": "true", "players": []}"#, "content_state.live", "expected a boolean, got a string"),
        (#"{"score": 1, "players": {}}"#, "content_state.players", "expected an array, got an object"),
        (#"{"score": 1, "players": [{}, {}, {}, {}]}"#, "content_state.players", "expected at most 3 elements, got 4"),
        (#"{"score": 1, "players": [{"name": "a"}, {"name": "b"}, {"name": "c", "score": "9"}]}"#, "content_state.players[2].score", "expected an integer, got a string"),
        (#"{"score": 1, "players": [{"name": "a"}, {"score": 1}]}"#, "content_state.players[1].name", "name is required"),
        (#"{"score": 1, "players": [{"name": "a", "tags": ["x", 1]}]}"#, "content_state.players[0].tags[1]", "expected a string, got a number"),
        (#"{"score": 1, "players": [null]}"#, "content_state.players[0]", "expected an object, got null"),
    ])
    func theFirstMismatchIsNamedByItsPath(content: String, path: String, message: String) throws {
        #expect(try self.refusal(content) == InvalidField(path, message))
    }

    /// The parser refuses such literals, but a value built in code may carry one.
    @Test func aNumberBeyondADoubleIsRefused() throws {
        let schema = try SchemaText.schema(Self.schema)
        let value = RawJSON.object([.init("score", .number("1")), .init("players", .array([])), .init("ratio", .number("1e400"))])
        #expect(SchemaText.refusal { () throws(InvalidField) in try schema.check(value, at: "content_state", now: Self.now) }
            == InvalidField("content_state.ratio", "expected a number, got 1e400, too large for a Double"))
    }

    @Test func lengthsCountUnicodeScalars() throws {
        // "é" as e + combining accent is one character but two scalars.
        #expect(try self.refusal(#"{"score": 1, "name": "e\u0301e\u0301e\u0301", "players": []}"#)?.message
            == "expected a string of at most 4 characters (Unicode scalars), got 6")
    }

    @Test func numbersCompareByValueNotLiteral() throws {
        let schema = try SchemaText.schema(#"{"type": "object", "properties": {"n": {"type": "number", "enum": [1, 2.50], "minimum": 1.0}}}"#)
        for literal in ["1", "1.0", "1e0", "2.5", "25e-1"] {
            #expect(SchemaText.refusal { () throws(InvalidField) in
                try schema.check(.object([.init("n", .number(literal))]), at: "", now: Self.now)
            } == nil, "\(literal)")
        }
    }

    @Test func aSchemaWithoutTypeAcceptsAnyValueAndNullOnlyNull() throws {
        let schema = try SchemaText.schema(#"{"type": "object", "properties": {"any": {}, "none": {"type": "null"}}}"#)
        let any = try SchemaText.json(#"{"any": {"deep": [[[null]]]}, "none": null}"#)
        #expect(SchemaText.refusal { () throws(InvalidField) in try schema.check(any, at: "attributes", now: Self.now) } == nil)
        #expect(SchemaText.refusal { () throws(InvalidField) in
            try schema.check(.object([.init("none", .bool(false))]), at: "attributes", now: Self.now)
        } == InvalidField("attributes.none", "expected null, got a boolean"))
    }

    @Test func additionalKeysAreAcceptedByDefault() throws {
        let schema = try SchemaText.schema(#"{"type": "object", "properties": {"a": {"type": "string"}}}"#)
        let value = try SchemaText.json(#"{"a": "x", "b": 1}"#)
        #expect(SchemaText.refusal { () throws(InvalidField) in try schema.check(value, at: "attributes", now: Self.now) } == nil)
    }

    @Test func aDateIsSecondsSince2001WithinAYearBeforeAndFiveAfter() throws {
        let reference = Self.now.timeIntervalSinceReferenceDate
        let year = 365.0 * 86_400
        for seconds in [reference - year, reference, reference + 5 * year] {
            #expect(try self.refusal(#"{"score": 1, "players": [], "endsAt": \#(Int64(seconds))}"#) == nil)
        }
        let early = try #require(try self.refusal(#"{"score": 1, "players": [], "endsAt": \#(Int64(reference - year) - 1)}"#))
        #expect(early.path == "content_state.endsAt")
        #expect(early.message.hasPrefix("expected a date between a year before now and five years after, in seconds since 2001-01-01"))
        #expect(!early.message.contains("Unix"))
        #expect(try self.refusal(#"{"score": 1, "players": [], "endsAt": \#(Int64(reference + 5 * year) + 1)}"#) != nil)
    }

    @Test func unixSecondsAreRefusedWithAHint() throws {
        let unix = Int64(Self.now.timeIntervalSince1970) + 3600
        let refusal = try #require(try self.refusal(#"{"score": 1, "players": [], "endsAt": \#(unix)}"#))
        #expect(refusal.path == "content_state.endsAt")
        #expect(refusal.message.hasSuffix("got \(unix); it looks like Unix time; ActivityKit's default date encoding counts seconds since 2001-01-01"))
        let milliseconds = try #require(try self.refusal(#"{"score": 1, "players": [], "endsAt": \#(unix * 1000)}"#))
        #expect(milliseconds.message.contains("it looks like Unix time in milliseconds"))
    }
}
