/// An allocation-free JSON reader for the request path: it checks that a payload is one well-formed JSON object and
/// notes what the device model reads from its `aps` object. Foundation's `JSONDecoder` took half of a request's
/// time, and the simulator has to answer tens of thousands of requests a second.
///
/// Keys and the `event` string are compared as written, so an escaped spelling of `"event"` is not recognised;
/// numbers with leading zeros and bytes that are not UTF-8 are let through.
struct PayloadScanner {
    /// The JSON type of a value.
    enum Kind: Equatable {
        case object, array, string, number, literal
    }

    /// What the top-level `aps` object holds, for the keys the simulator reads.
    struct APS {
        /// `aps.event` as written, when it is a string.
        var event: ArraySlice<UInt8>?
        /// `aps.timestamp`, when it is a number.
        var timestamp: Double?
        /// The kinds of the other keys the simulator reads, when present (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
        var contentState: Kind?
        var attributesType: Kind?
        var attributes: Kind?
        var alert: Kind?
        /// `aps.input-push-channel` as written, when it is a string (a start that subscribes to a broadcast channel).
        var inputPushChannel: ArraySlice<UInt8>?
    }

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    private static let maximumDepth = 64

    /// Reads `bytes`; `nil` unless they are exactly one JSON object (with surrounding white space) whose `aps` key
    /// holds an object.
    static func aps(in bytes: [UInt8]) -> APS? {
        var scanner = PayloadScanner(bytes: bytes)
        var aps: APS?
        guard scanner.skipSpace() == UInt8(ascii: "{"),
            scanner.object(readingValue: { reader, key in
                guard key.elementsEqual("aps".utf8) else { return reader.value() != nil }
                aps = reader.apsObject()
                return aps != nil
            }),
            scanner.skipSpace() == nil
        else { return nil }
        return aps
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    // MARK: - Values

    /// Reads one value at the current position and returns its kind; `nil` when it is malformed.
    private mutating func value() -> Kind? {
        guard let first = self.skipSpace() else { return nil }
        switch first {
        case UInt8(ascii: "{"): return self.object(readingValue: { reader, _ in reader.value() != nil }) ? .object : nil
        case UInt8(ascii: "["): return self.array() ? .array : nil
        case UInt8(ascii: "\""): return self.string() != nil ? .string : nil
        case UInt8(ascii: "t"): return self.literal("true") ? .literal : nil
        case UInt8(ascii: "f"): return self.literal("false") ? .literal : nil
        case UInt8(ascii: "n"): return self.literal("null") ? .literal : nil
        default: return self.number() ? .number : nil
        }
    }

    /// Reads `aps`: an object, noting the keys the simulator reads; `nil` when it is not an object or is malformed.
    private mutating func apsObject() -> APS? {
        guard self.skipSpace() == UInt8(ascii: "{") else {
            return nil
        }
        var aps = APS()
        let isObject = self.object(readingValue: { reader, key in
            let start = reader.index
            guard let kind = reader.value() else { return false }
            let text = reader.bytes[start..<reader.index].drop { Self.isSpace($0) }
            switch String(decoding: key, as: UTF8.self) {
            case "event": aps.event = kind == .string ? text.dropFirst().dropLast() : nil
            case "timestamp": aps.timestamp = kind == .number ? Double(String(decoding: text, as: UTF8.self)) : nil
            case "content-state": aps.contentState = kind
            case "attributes-type": aps.attributesType = kind
            case "attributes": aps.attributes = kind
            case "alert": aps.alert = kind
            case "input-push-channel": aps.inputPushChannel = kind == .string ? text.dropFirst().dropLast() : nil
            default: break
            }
            return true
        })
        return isObject ? aps : nil
    }

    /// Reads an object starting at its `{`, calling `readingValue` after each key to read that key's value and
    /// say whether it was well formed. `false` when malformed.
    private mutating func object(readingValue: (inout PayloadScanner, ArraySlice<UInt8>) -> Bool) -> Bool {
        guard self.enter() else { return false }
        defer { self.depth -= 1 }
        self.index += 1
        if self.skipSpace() == UInt8(ascii: "}") {
            self.index += 1
            return true
        }
        while true {
            guard self.skipSpace() == UInt8(ascii: "\""), let key = self.string(),
                self.skipSpace() == UInt8(ascii: ":")
            else { return false }
            self.index += 1
            guard readingValue(&self, key) else { return false }
            switch self.skipSpace() {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "}"):
                self.index += 1
                return true
            default: return false
            }
        }
    }

    /// Reads an array starting at its `[`; `false` when malformed.
    private mutating func array() -> Bool {
        guard self.enter() else { return false }
        defer { self.depth -= 1 }
        self.index += 1
        if self.skipSpace() == UInt8(ascii: "]") {
            self.index += 1
            return true
        }
        while true {
            guard self.value() != nil else { return false }
            switch self.skipSpace() {
            case UInt8(ascii: ","): self.index += 1
            case UInt8(ascii: "]"):
                self.index += 1
                return true
            default: return false
            }
        }
    }

    /// Reads a string starting at its `"` and returns its content as written, escapes included; `nil` when
    /// malformed.
    private mutating func string() -> ArraySlice<UInt8>? {
        self.index += 1
        let start = self.index
        while self.index < self.bytes.count {
            let byte = self.bytes[self.index]
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                return self.bytes[start..<(self.index - 1)]
            case UInt8(ascii: "\\"):
                guard self.index + 1 < self.bytes.count else { return nil }
                let escaped = self.bytes[self.index + 1]
                if escaped == UInt8(ascii: "u") {
                    guard self.index + 5 < self.bytes.count,
                        self.bytes[(self.index + 2)...(self.index + 5)].allSatisfy(Self.isHexDigit)
                    else { return nil }
                    self.index += 6
                } else {
                    guard "\"\\/bfnrt".utf8.contains(escaped) else { return nil }
                    self.index += 2
                }
            case 0..<0x20:
                return nil
            default:
                self.index += 1
            }
        }
        return nil
    }

    /// Reads a number as JSON writes it (`-? int frac? exp?`); `false` when malformed.
    private mutating func number() -> Bool {
        self.skip(UInt8(ascii: "-"))
        guard self.digits() > 0 else { return false }
        if self.skip(UInt8(ascii: ".")) {
            guard self.digits() > 0 else { return false }
        }
        if self.skip(UInt8(ascii: "e")) || self.skip(UInt8(ascii: "E")) {
            _ = self.skip(UInt8(ascii: "+")) || self.skip(UInt8(ascii: "-"))
            guard self.digits() > 0 else { return false }
        }
        return true
    }

    /// Reads `true`, `false` or `null`.
    private mutating func literal(_ word: String) -> Bool {
        let end = self.index + word.utf8.count
        guard end <= self.bytes.count, self.bytes[self.index..<end].elementsEqual(word.utf8) else { return false }
        self.index = end
        return true
    }

    // MARK: - Bytes

    /// Moves past white space and returns the next byte without consuming it; `nil` at the end.
    private mutating func skipSpace() -> UInt8? {
        while self.index < self.bytes.count, Self.isSpace(self.bytes[self.index]) { self.index += 1 }
        return self.index < self.bytes.count ? self.bytes[self.index] : nil
    }

    @discardableResult
    private mutating func skip(_ byte: UInt8) -> Bool {
        guard self.index < self.bytes.count, self.bytes[self.index] == byte else { return false }
        self.index += 1
        return true
    }

    private mutating func digits() -> Int {
        let start = self.index
        while self.index < self.bytes.count, (0x30...0x39).contains(self.bytes[self.index]) { self.index += 1 }
        return self.index - start
    }

    /// Counts one more level of nesting; `false` beyond ``maximumDepth``, so a hostile payload cannot exhaust the
    /// stack.
    private mutating func enter() -> Bool {
        self.depth += 1
        return self.depth <= Self.maximumDepth
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
