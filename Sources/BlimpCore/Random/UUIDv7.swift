import Foundation

/// UUID version 7 (RFC 9562 §5.7): the first 48 bits are the Unix time in milliseconds, then the version, 74 random
/// bits and the variant. Push ids are made so, which tells a push whose report aged out (its id older than the
/// retention) from an id never issued, and keeps new ids together at the end of the primary key's index.
public enum UUIDv7 {
    /// A new version 7 UUID for `date`, its random bits from the system's secure generator.
    public static func make(at date: Date = Date()) -> UUID {
        let milliseconds = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
            raw[6] = raw[6] & 0x0F | 0x70  // version 7
            raw[8] = raw[8] & 0x3F | 0x80  // RFC 9562 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }

    /// The time a version 7 UUID carries (to the millisecond); `nil` for any other version or variant.
    public static func time(of id: UUID) -> Date? {
        let bytes = id.uuid
        guard bytes.6 >> 4 == 7, bytes.8 >> 6 == 0b10 else { return nil }
        let milliseconds = [bytes.0, bytes.1, bytes.2, bytes.3, bytes.4, bytes.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}
