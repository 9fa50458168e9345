import Testing

@testable import BlimpCore

@Suite struct RawJSONParserTests {
    static func parse(_ text: String) throws -> RawJSON {
        try RawJSONParser.parse(Array(text.utf8))
    }

    static func syntaxError(_ text: String) -> RawJSONParser.SyntaxError? {
        Self.syntaxError(Array(text.utf8))
    }

    static func syntaxError(_ bytes: [UInt8]) -> RawJSONParser.SyntaxError? {
        do {
            _ = try RawJSONParser.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    static let roundTrips = [
        #"{"odds":0.941,"one":1.0,"negativeZero":-0,"thousand":1e3,"big":123456789012345678901234}"#,
        #"[-1.5E-7,1E+2,0,-0.0,10,3.14159265358979323846264338327950288]"#,
        #"{"Zeta":1,"alpha":2,"Alpha":3,"ALPHA":4}"#,
        #"{"a":{},"b":[],"c":[[],{}],"d":[{}]}"#,
        #"{}"#,
        #"[]"#,
        #"[null,true,false,"",0]"#,
        #"{"é":"ünïcødé 😀","k":"/"}"#,
    ]

    @Test(arguments: roundTrips) func compactTextRoundTripsExactly(_ text: String) throws {
        #expect(try Self.parse(text).text == text)
    }

    @Test func whitespaceIsDroppedAndLiteralsKept() throws {
        let json = try Self.parse(" {\n\t\"Score\" : 0.941 ,\r\n \"list\" : [ 1.0 , -0 , 1e3 ] }\n ")
        #expect(json.text == #"{"Score":0.941,"list":[1.0,-0,1e3]}"#)
        #expect(json == .object([
            .init("Score", .number("0.941")),
            .init("list", .array([.number("1.0"), .number("-0"), .number("1e3")])),
        ]))
        #expect(json["Score"] == .number("0.941"))
        #expect(json["score"] == nil)
        #expect(RawJSON.array([])["Score"] == nil)
    }

    @Test func stringsWithAnEscapeAfterPlainTextKeepBothParts() throws {
        #expect(try Self.parse(#"["plain text then \"quoted\" and \u00e9", "é plain", "tab\tend"]"#)
            == .array([.string("plain text then \"quoted\" and é"), .string("é plain"), .string("tab\tend")]))
        #expect(Self.syntaxError("[\"plain then a raw\ttab\"]")?.message == "a control character must be escaped in a string")
        #expect(Self.syntaxError([UInt8(ascii: "\""), 0x61, 0xFF, UInt8(ascii: "\"")])?.message == "a string is not valid UTF-8")
    }

    @Test func escapesAreDecodedAndWrittenBack() throws {
        let json = try Self.parse(#"["a\nb\"c\\d\u00e9\ud83d\ude00\/\t\b\f\r\u0001\u001F"]"#)
        #expect(json == .array([.string("a\nb\"c\\dé😀/\t\u{8}\u{C}\r\u{1}\u{1F}")]))
        #expect(json.text == #"["a\nb\"c\\dé😀/\t\u0008\u000c\r\u0001\u001f"]"#)
        // Escaped keys too, and upper-case hex.
        let object = try Self.parse(#"{"\u00C9t\u00e9":1,"q\"k":2}"#)
        #expect(object.text == #"{"Été":1,"q\"k":2}"#)
    }

    @Test func writtenStringsAreReadBackUnchanged() throws {
        let strings = ["", "plain", "quote \" backslash \\ slash /", "\u{1}\u{1F}\u{7F}", "line\nfeed\r\ttab", "é😀\u{2028}"]
        for string in strings {
            let text = RawJSON.array([.string(string)]).text
            #expect(try Self.parse(text) == .array([.string(string)]), "\(text)")
        }
    }

    @Test func integersAndKinds() {
        #expect(RawJSON.integer(-42) == .number("-42"))
        #expect(RawJSON.integer(Int64.max).text == "9223372036854775807")
        #expect(RawJSON.null.kind == "null")
        #expect(RawJSON.object([]).kind == "an object")
        #expect(RawJSON.array([]).kind == "an array")
        #expect(RawJSON.array([]).isArray)
        #expect(!RawJSON.object([]).isArray)
    }

    @Test func syntaxErrorsNameLineAndColumn() throws {
        // A trailing comma inside an array on line 2: the error is at the ']'.
        let trailing = try #require(Self.syntaxError("{\"a\": [1,\n 2,]}"))
        #expect(trailing == .init(message: "unexpected character", line: 2, column: 4))

        // A trailing comma in an object: the error is where a key should be, on the next line.
        let objectComma = try #require(Self.syntaxError("{\n  \"a\": 1,\n}"))
        #expect(objectComma == .init(message: "expected a key in quotes", line: 3, column: 1))

        let missingColon = try #require(Self.syntaxError("{\"a\" 1}"))
        #expect(missingColon == .init(message: "expected ':' after a key", line: 1, column: 6))

        let missingComma = try #require(Self.syntaxError("[1 2]"))
        #expect(missingComma == .init(message: "expected ',' or ']'", line: 1, column: 4))

        let missingBrace = try #require(Self.syntaxError("{\"a\": 1"))
        #expect(missingBrace == .init(message: "expected ',' or '}'", line: 1, column: 8))

        let empty = try #require(Self.syntaxError(""))
        #expect(empty == .init(message: "unexpected end of the body", line: 1, column: 1))

        let onlySpace = try #require(Self.syntaxError("\n  "))
        #expect(onlySpace == .init(message: "unexpected end of the body", line: 2, column: 3))

        // Columns count UTF-8 bytes.
        #expect(Self.syntaxError(#"["é" x]"#) == .init(message: "expected ',' or ']'", line: 1, column: 7))
    }

    @Test func duplicateKeysAreRejectedAtTheSecondKey() throws {
        let error = try #require(Self.syntaxError("{\"a\": 1,\n \"b\": {\"x\": 1, \"a\": 2},\n \"a\": 3}"))
        #expect(error == .init(message: "the key 'a' appears twice", line: 3, column: 2))
        // Keys differing only in case are distinct.
        #expect(try Self.parse(#"{"a":1,"A":2}"#).text == #"{"a":1,"A":2}"#)
        // An escaped spelling of the same key is the same key.
        #expect(Self.syntaxError(#"{"é":1,"\u00e9":2}"#)?.message == "the key 'é' appears twice")
        // Large objects too, whichever member the key repeats.
        let keys = (0..<40).map { "\"k\($0)\":\($0)" }
        #expect(try Self.parse("{" + keys.joined(separator: ",") + "}")["k39"] == .number("39"))
        for repeated in [0, 15, 16, 39] {
            let text = "{" + (keys + ["\"k\(repeated)\":0"]).joined(separator: ",") + "}"
            #expect(Self.syntaxError(text)?.message == "the key 'k\(repeated)' appears twice")
        }
    }

    /// What PostgreSQL's jsonb or a device's JSONDecoder could not take is refused at the parse, where it can be
    /// answered with its position, never later as a database error (or a 500 for other apps' writes beside it).
    @Test func nulAndUnstorableNumbersAreRefusedWhereTheyStand() throws {
        let cases: [(String, String, Int)] = [
            (#"{"a": "x\u0000y"}"#, "a string must not contain \\u0000 (NUL)", 9),
            (#"[1e1000000]"#, "a number must fit", 2),
            (#"[-1e309]"#, "a number must fit", 2),
            (#"[1e-20000]"#, "a number must fit", 2),
            ("[0." + String(repeating: "1", count: 70) + "]", "a number must fit", 2),
        ]
        for (text, message, column) in cases {
            let error = try #require(Self.syntaxError(text), "\(text)")
            #expect(error.message.hasPrefix(message) && error.column == column, "\(text): \(error)")
        }
        for text in ["[0e-20000]", "[-0.0e5]", "[1e308]", "[4.9e-324]", "[9000000000000000000]", #"["\u0001"]"#] {
            #expect(Self.syntaxError(text) == nil, "\(text)")
        }
    }

    @Test func nestingIsLimitedTo64() throws {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try Self.parse(deepest).text == deepest)
        let objects = String(repeating: #"{"a":"#, count: 63) + "[]" + String(repeating: "}", count: 63)
        #expect(try Self.parse(objects).text == objects)

        let tooDeep = try #require(Self.syntaxError(String(repeating: "[", count: 65) + String(repeating: "]", count: 65)))
        #expect(tooDeep == .init(message: "arrays and objects nest more than 64 deep", line: 1, column: 65))
        let tooDeepObjects = String(repeating: #"{"a":"#, count: 64) + "[]" + String(repeating: "}", count: 64)
        #expect(Self.syntaxError(tooDeepObjects)?.message == "arrays and objects nest more than 64 deep")
        // Depth is counted down again on the way out: many siblings at depth 64 are fine.
        let siblings = String(repeating: "[", count: 63) + "[],[],[]" + String(repeating: "]", count: 63)
        #expect(try Self.parse(siblings).text == siblings)
    }

    @Test func unterminatedStrings() throws {
        #expect(try #require(Self.syntaxError(#"{"a": "abc"#)) == .init(message: "a string is not closed", line: 1, column: 11))
        #expect(Self.syntaxError(#"{"abc"#)?.message == "a string is not closed")
        #expect(Self.syntaxError(#"["abc\"#)?.message == "a string is not closed")
        #expect(Self.syntaxError(#"["abc\""#)?.message == "a string is not closed")
        #expect(Self.syntaxError("[\"a\nb\"]") == .init(message: "a control character must be escaped in a string", line: 1, column: 4))
        #expect(Self.syntaxError("[\"a\tb\"]")?.message == "a control character must be escaped in a string")
    }

    static let loneSurrogates = [
        #"["\ud83d"]"#,  // a lone high surrogate
        #"["\ud83dx"]"#,
        #"["\ud83d\n"]"#,
        #"["\ud83d\u0041"]"#,  // high then not a low
        #"["\ud83d\ud83d"]"#,
        #"["\ude00"]"#,  // a lone low surrogate
        #"["\ude00\ud83d"]"#,  // a pair the wrong way round
        #"["\ud83d"#,
    ]

    @Test(arguments: loneSurrogates) func loneSurrogatesAreRejected(_ text: String) {
        #expect(Self.syntaxError(text) != nil)
    }

    @Test func otherBadEscapes() {
        #expect(Self.syntaxError(#"["\ud83d"]"#)?.message == "a \\u escape is half of a surrogate pair")
        #expect(Self.syntaxError(#"["\ude00"]"#)?.message == "a \\u escape is half of a surrogate pair")
        #expect(Self.syntaxError(#"["\x"]"#) == .init(message: "unknown escape in a string", line: 1, column: 4))
        #expect(Self.syntaxError(#"["\u12"]"#)?.message == "a \\u escape needs four hex digits")
        #expect(Self.syntaxError(#"["\u12g4"]"#)?.message == "a \\u escape needs four hex digits")
        #expect(Self.syntaxError(#"["\u12"#)?.message == "a \\u escape needs four hex digits")
        #expect(Self.syntaxError([0x22, 0xFF, 0x22])?.message == "a string is not valid UTF-8")
        #expect(Self.syntaxError([0x22, 0xC3, 0x22])?.message == "a string is not valid UTF-8")
    }

    static let badNumbers: [(String, String)] = [
        ("01", "unexpected text after the JSON value"),
        ("[01]", "expected ',' or ']'"),
        ("-01", "unexpected text after the JSON value"),
        ("1.", "a number needs digits after '.'"),
        ("[1.]", "a number needs digits after '.'"),
        ("1.e3", "a number needs digits after '.'"),
        ("1e", "a number needs digits in its exponent"),
        ("1e+", "a number needs digits in its exponent"),
        ("-", "a number needs digits"),
        ("-a", "a number needs digits"),
        (".5", "unexpected character"),
        ("+1", "unexpected character"),
        ("0x10", "unexpected text after the JSON value"),
        ("NaN", "unexpected character"),
        ("[Infinity]", "unexpected character"),
    ]

    @Test(arguments: badNumbers) func badNumbersAreRejected(_ text: String, _ message: String) {
        #expect(Self.syntaxError(text)?.message == message)
    }

    @Test func trailingTextAndBadLiterals() throws {
        #expect(try #require(Self.syntaxError("{} x")) == .init(message: "unexpected text after the JSON value", line: 1, column: 4))
        #expect(try #require(Self.syntaxError("{}\n{}")) == .init(message: "unexpected text after the JSON value", line: 2, column: 1))
        #expect(Self.syntaxError("1 2")?.message == "unexpected text after the JSON value")
        #expect(Self.syntaxError("truex")?.message == "unexpected text after the JSON value")
        #expect(Self.syntaxError("tru")?.message == "unexpected character")
        #expect(Self.syntaxError("[nul]")?.message == "unexpected character")
        #expect(Self.syntaxError("True")?.message == "unexpected character")
        #expect(Self.syntaxError("{'a': 1}")?.message == "expected a key in quotes")
        #expect(Self.syntaxError("{a: 1}")?.message == "expected a key in quotes")
        #expect(Self.syntaxError("[1,]")?.message == "unexpected character")
        #expect(Self.syntaxError("[,1]")?.message == "unexpected character")
        // Scalars are JSON texts too.
        #expect(try Self.parse(" 42 ") == .number("42"))
        #expect(try Self.parse("\"x\"") == .string("x"))
        #expect(try Self.parse("null") == .null)
    }
}
