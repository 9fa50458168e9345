/// Reads JSON text into ``RawJSON``, byte by byte. Rejects what RFC 8259 rejects, plus duplicate keys in an object
/// (which would leave a payload's meaning to chance), nesting deeper than ``maximumDepth``, and what Blimp could
/// accept but neither store nor deliver: `\u0000` in a string (PostgreSQL's `text` and `jsonb` cannot hold it) and a
/// number a `Double` cannot carry (infinite, a non-zero that rounds to zero, or longer than
/// ``maximumNumberLength``: `jsonb` refuses such numbers, and a device's `JSONDecoder` could not read them). Errors
/// name the line and column, as Airship's error details do.
public struct RawJSONParser {
    /// How deeply arrays and objects may nest.
    public static let maximumDepth = 64
    /// The longest number literal, in characters.
    public static let maximumNumberLength = 64
    /// Up to this many members, an object checks a new key against its members one by one.
    private static let linearKeySearch = 16

    /// Why the text is not JSON, and where (both 1-based).
    public struct SyntaxError: Error, Sendable, Equatable {
        public var message: String
        public var line: Int
        public var column: Int
    }

    private let bytes: [UInt8]
    private let numberLength: Int
    private var index = 0
    private var depth = 0

    /// The longest number literal in JSON that PostgreSQL wrote: `jsonb` writes numbers out in full (`1e300` as 301
    /// digits), so what ``maximumNumberLength`` let in comes back longer.
    public static let storedNumberLength = 1024

    /// Parses `text`, which must hold exactly one JSON value (whitespace around it is fine), with number literals of
    /// at most `numberLength` characters.
    public static func parse(
        _ text: some Collection<UInt8>, numberLength: Int = Self.maximumNumberLength
    ) throws(SyntaxError) -> RawJSON {
        var parser = RawJSONParser(bytes: Array(text), numberLength: numberLength)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8], numberLength: Int) {
        self.bytes = bytes
        self.numberLength = numberLength
    }

    private mutating func value() throws(SyntaxError) -> RawJSON {
        guard self.index < self.bytes.count else { throw self.error("unexpected end of the body") }
        switch self.bytes[self.index] {
        case UInt8(ascii: "{"): return try self.object()
        case UInt8(ascii: "["): return try self.array()
        case UInt8(ascii: "\""): return .string(try self.string())
        case UInt8(ascii: "t"): try self.literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try self.literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try self.literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try self.number())
        default: throw self.error("unexpected character")
        }
    }

    private mutating func object() throws(SyntaxError) -> RawJSON {
        try self.enter()
        self.index += 1
        var members: [RawJSON.Member] = []
        // Small objects look for a repeated key among their members; large ones keep a set.
        var keys: Set<String>?
        self.skipWhitespace()
        if self.peek(UInt8(ascii: "}")) {
            self.index += 1
            self.depth -= 1
            return .object(members)
        }
        while true {
            self.skipWhitespace()
            guard self.peek(UInt8(ascii: "\"")) else { throw self.error("expected a key in quotes") }
            let keyStart = self.index
            let key = try self.string()
            if members.count == Self.linearKeySearch { keys = Set(members.map(\.key)) }
            let repeated = keys?.insert(key).inserted == false || (keys == nil && members.contains { $0.key == key })
            guard !repeated else {
                self.index = keyStart
                throw self.error("the key '\(key)' appears twice")
            }
            self.skipWhitespace()
            try self.expect(UInt8(ascii: ":"), "expected ':' after a key")
            self.skipWhitespace()
            members.append(RawJSON.Member(key, try self.value()))
            self.skipWhitespace()
            if self.peek(UInt8(ascii: ",")) {
                self.index += 1
                continue
            }
            try self.expect(UInt8(ascii: "}"), "expected ',' or '}'")
            self.depth -= 1
            return .object(members)
        }
    }

    private mutating func array() throws(SyntaxError) -> RawJSON {
        try self.enter()
        self.index += 1
        var elements: [RawJSON] = []
        self.skipWhitespace()
        if self.peek(UInt8(ascii: "]")) {
            self.index += 1
            self.depth -= 1
            return .array(elements)
        }
        while true {
            self.skipWhitespace()
            elements.append(try self.value())
            self.skipWhitespace()
            if self.peek(UInt8(ascii: ",")) {
                self.index += 1
                continue
            }
            try self.expect(UInt8(ascii: "]"), "expected ',' or ']'")
            self.depth -= 1
            return .array(elements)
        }
    }

    private mutating func string() throws(SyntaxError) -> String {
        self.index += 1
        // Most strings have no escapes: they are read straight from the text. Most are ASCII too, which needs no
        // validation (the standard library's validating initializer runs unspecialized, and cost nearly as much as
        // the rest of the parse).
        let start = self.index
        var allBits: UInt8 = 0
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            if byte == UInt8(ascii: "\"") {
                let text = self.bytes[start..<self.index]
                let string =
                    allBits < 0x80 ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
                guard let string else { throw self.error("a string is not valid UTF-8") }
                self.index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            allBits |= byte
            self.index += 1
        }
        var utf8 = Array(self.bytes[start..<self.index])
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw self.error("a string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                self.index += 1
                try self.escape(into: &utf8)
            case 0..<0x20:
                throw self.error("a control character must be escaped in a string")
            default:
                utf8.append(byte)
                self.index += 1
            }
        }
        throw self.error("a string is not closed")
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(SyntaxError) {
        guard self.index < self.bytes.count else { throw self.error("a string is not closed") }
        let byte = self.bytes[self.index]
        self.index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try self.hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard self.bytes[self.index...].starts(with: Array(#"\u"#.utf8)) else {
                    throw self.error("a \\u escape is half of a surrogate pair")
                }
                self.index += 2
                let low = try self.hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw self.error("a \\u escape is half of a surrogate pair") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw self.error("a \\u escape is half of a surrogate pair") }
            guard scalar != 0 else {
                self.index -= 6
                throw self.error("a string must not contain \\u0000 (NUL)")
            }
            utf8.append(contentsOf: String(Character(unicode)).utf8)
        default:
            self.index -= 1
            throw self.error("unknown escape in a string")
        }
    }

    private mutating func hex4() throws(SyntaxError) -> UInt32 {
        guard self.index + 4 <= self.bytes.count else { throw self.error("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for byte in self.bytes[self.index..<self.index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw self.error("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
        }
        self.index += 4
        return value
    }

    /// A number per RFC 8259: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as its literal.
    private mutating func number() throws(SyntaxError) -> String {
        let start = self.index
        if self.peek(UInt8(ascii: "-")) { self.index += 1 }
        if self.peek(UInt8(ascii: "0")) {
            self.index += 1
        } else {
            guard self.digits() > 0 else { throw self.error("a number needs digits") }
        }
        if self.peek(UInt8(ascii: ".")) {
            self.index += 1
            guard self.digits() > 0 else { throw self.error("a number needs digits after '.'") }
        }
        if self.peek(UInt8(ascii: "e")) || self.peek(UInt8(ascii: "E")) {
            self.index += 1
            if self.peek(UInt8(ascii: "+")) || self.peek(UInt8(ascii: "-")) { self.index += 1 }
            guard self.digits() > 0 else { throw self.error("a number needs digits in its exponent") }
        }
        let literal = String(decoding: self.bytes[start..<self.index], as: UTF8.self)
        guard self.index - start <= self.numberLength, let value = Double(literal), value.isFinite,
            value != 0 || !Self.hasNonZeroDigit(self.bytes[start..<self.index])
        else {
            self.index = start
            throw self.error("a number must fit a 64-bit floating-point value (finite, not rounding to zero, at most \(self.numberLength) characters)")
        }
        return literal
    }

    /// Whether a number literal's significand has a digit other than 0.
    private static func hasNonZeroDigit(_ literal: ArraySlice<UInt8>) -> Bool {
        for byte in literal {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return false }
            if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte) { return true }
        }
        return false
    }

    private mutating func digits() -> Int {
        let start = self.index
        while self.index < self.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self.bytes[self.index]) {
            self.index += 1
        }
        return self.index - start
    }

    private mutating func literal(_ word: StaticString) throws(SyntaxError) {
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard self.bytes[self.index...].starts(with: text) else { throw self.error("unexpected character") }
        self.index += text.count
    }

    private mutating func enter() throws(SyntaxError) {
        self.depth += 1
        guard self.depth <= Self.maximumDepth else {
            throw self.error("arrays and objects nest more than \(Self.maximumDepth) deep")
        }
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws(SyntaxError) {
        guard self.peek(byte) else { throw self.error(message) }
        self.index += 1
    }

    private func peek(_ byte: UInt8) -> Bool {
        self.index < self.bytes.count && self.bytes[self.index] == byte
    }

    private mutating func skipWhitespace() {
        while self.index < self.bytes.count {
            switch self.bytes[self.index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): self.index += 1
            default: return
            }
        }
    }

    /// An error at the current position, counted in lines and UTF-8 columns.
    private func error(_ message: String) -> SyntaxError {
        let end = min(self.index, self.bytes.count)
        var line = 1
        var column = 1
        for byte in self.bytes[..<end] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return SyntaxError(message: message, line: line, column: column)
    }
}
