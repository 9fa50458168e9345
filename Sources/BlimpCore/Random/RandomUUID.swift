import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's secure generator. On Linux, Foundation's `UUID()` opens
    /// `/dev/urandom` on every call, which shows in profiles of request paths; this costs two `getrandom` calls.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0F | 0x40  // version 4
            raw[8] = raw[8] & 0x3F | 0x80  // RFC 4122 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}

extension UUID {
    /// Parses `8-4-4-4-12` hex digits in either case. Foundation's `UUID(uuidString:)` goes through `sscanf` on
    /// Linux, which shows in request profiles.
    public init?(parsing text: String) {
        var bytes = [UInt8](repeating: 0, count: 16)
        var count = 0
        var high: UInt8?
        for (index, character) in text.utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let first = high {
                guard count < 16 else { return nil }
                bytes[count] = first << 4 | nibble
                count += 1
                high = nil
            } else {
                high = nibble
            }
        }
        guard count == 16, high == nil, text.utf8.count == 36 else { return nil }
        self = bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
