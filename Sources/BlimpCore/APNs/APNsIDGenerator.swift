import Foundation

/// Makes `apns-id` values for every request: random (version 4) UUIDs from a generator seeded once by the system.
///
/// On Linux, Foundation's `UUID()` opens `/dev/urandom` on every call and `uuidString` formats through `printf`;
/// at tens of thousands of requests per second both show in profiles. Ids only need to be unique, not secret.
/// Keep one generator per connection (it is a value; it is not shared between threads).
public struct APNsIDGenerator: Sendable {
    private var random: SeededRandomNumberGenerator

    public init() {
        var system = SystemRandomNumberGenerator()
        self.random = SeededRandomNumberGenerator(seed: system.next())
    }

    /// A new random UUID.
    public mutating func next() -> UUID {
        let (high, low) = (self.random.next(), self.random.next())
        var bytes = (high.bigEndian, low.bigEndian)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = raw[6] & 0x0F | 0x40  // version 4
            raw[8] = raw[8] & 0x3F | 0x80  // RFC 4122 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}

extension UUID {
    /// `8-4-4-4-12` lower-case hex digits, as APNs writes `apns-id` (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns) and
    /// Airship writes channel ids, without Foundation's `printf`.
    public var lowercaseString: String {
        withUnsafeBytes(of: self.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                let digits = Self.hexDigits.utf8Start
                var offset = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[offset] = UInt8(ascii: "-")
                        offset += 1
                    }
                    text[offset] = digits[Int(byte >> 4)]
                    text[offset + 1] = digits[Int(byte & 0x0F)]
                    offset += 2
                }
                return offset
            }
        }
    }

    private static let hexDigits: StaticString = "0123456789abcdef"
}
