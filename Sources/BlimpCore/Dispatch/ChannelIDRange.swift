import Foundation

/// A range of channel ids, `(after, through]`, in PostgreSQL's `uuid` order (bytes, most significant first): what
/// one part of a push's fan-out covers.
public struct ChannelIDRange: Sendable, Equatable {
    public var after: UUID
    public var through: UUID

    public init(after: UUID, through: UUID) {
        self.after = after
        self.through = through
    }

    /// Every channel id.
    public static let all = ChannelIDRange(
        after: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        through: UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))

    /// The range cut into `count` adjacent ranges of equal width (channel ids are random, so about equally full),
    /// in order; fewer when it is narrower than `count`.
    public func split(into count: Int) -> [ChannelIDRange] {
        let (low, high) = (self.after.integer, self.through.integer)
        guard count > 1, high > low else { return [self] }
        let width = (high - low) / UInt128(count)
        guard width > 0 else { return [self] }
        var ranges: [ChannelIDRange] = []
        var start = low
        for index in 0..<count {
            let end = index == count - 1 ? high : start + width
            ranges.append(ChannelIDRange(after: UUID(integer: start), through: UUID(integer: end)))
            start = end
        }
        return ranges
    }
}

extension UUID {
    /// The id as a 128-bit number, in the order PostgreSQL sorts `uuid`s.
    fileprivate var integer: UInt128 {
        withUnsafeBytes(of: self.uuid) { bytes in bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
    }

    fileprivate init(integer: UInt128) {
        var value = integer
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in stride(from: 15, through: 0, by: -1) {
            bytes[index] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
        self = bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
