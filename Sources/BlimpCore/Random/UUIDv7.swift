import Foundation
import Synchronization

/// UUID version 7 (RFC 9562 §5.7): the first 48 bits are the Unix time in milliseconds, then the version, 74 random
/// bits and the variant. Push ids are made so, which tells a push whose report aged out (its id older than the
/// retention) from an id never issued, and keeps new ids together at the end of the primary key's index.
public enum UUIDv7 {
    /// The last id ``make()`` returned, as two big-endian halves.
    private static let last = Mutex<(UInt64, UInt64)>((0, 0))

    /// A new version 7 UUID for now, greater than every one this process made before: one made in the same
    /// millisecond as the last (or while the clock stepped back) is the last plus one in its random bits, as in RFC
    /// 9562 §6.2's method 2 (https://www.rfc-editor.org/rfc/rfc9562#section-6.2). A request's pushes, made one after
    /// another, so sort in the order they were accepted.
    public static func make() -> UUID {
        Self.last.withLock { last in
            var next = Self.halves(of: Self.make(at: Date()))
            if next.0 < last.0 || (next.0 == last.0 && next.1 <= last.1) { next = Self.successor(of: last) }
            last = next
            var bytes = (next.0.bigEndian, next.1.bigEndian)
            return withUnsafeBytes(of: &bytes) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
    }

    /// The id after `id` with its version and variant kept: the 62 random bits after the variant count up, then the
    /// 12 after the version, then the millisecond.
    private static func successor(of id: (UInt64, UInt64)) -> (UInt64, UInt64) {
        let (randomB, randomA): (UInt64, UInt64) = (0x3FFF_FFFF_FFFF_FFFF, 0xFFF)
        if id.1 & randomB != randomB { return (id.0, id.1 + 1) }
        let variant = id.1 & ~randomB
        if id.0 & randomA != randomA { return (id.0 + 1, variant) }
        return ((id.0 & ~randomA) + (1 << 16), variant)
    }

    private static func halves(of id: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: id.uuid) { ($0.loadUnaligned(as: UInt64.self).bigEndian, $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian) }
    }

    /// A new version 7 UUID for `date`, its random bits from the system's secure generator.
    public static func make(at date: Date) -> UUID {
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
