import Foundation

/// A stream's `subset`: a sample of its events, or one of `count` partitions by channel, so that several readers
/// share one stream. Both are chosen by a hash that every api process computes alike (FNV-1a), so a reader that
/// reconnects to another process keeps its share.
public enum EventSubset: Sendable, Equatable {
    /// About `proportion` (0 to 1) of the events.
    case sample(proportion: Double)
    /// The events of the channels in partition `selection` of `count` (0-based); events about no channel go to
    /// partition 0, so that each reaches one reader.
    case partition(count: Int, selection: Int)

    init(parsing reader: JSONObjectReader) throws(InvalidField) {
        switch try reader.required("type", { key throws(InvalidField) in try reader.choice(key, ["SAMPLE", "PARTITION"]) }) {
        case "SAMPLE":
            guard case .number(let literal)? = try reader.number("proportion", in: 0...1), let proportion = Double(literal) else {
                throw InvalidField("subset.proportion", "proportion is required, from 0 to 1")
            }
            self = .sample(proportion: proportion)
        default:
            let count = try reader.required("count") { key throws(InvalidField) in try reader.integer(key, in: 1...1024) }
            let selection = try reader.required("selection") { key throws(InvalidField) in try reader.integer(key, in: 0...1023) }
            guard selection < count else { throw InvalidField("subset.selection", "must be below count") }
            self = .partition(count: Int(count), selection: Int(selection))
        }
    }

    /// Whether this reader's share includes `event`.
    func includes(_ event: StreamedEvent) -> Bool {
        switch self {
        case .sample(let proportion):
            return Double(Self.hash(event.id) % 10_000) < proportion * 10_000
        case .partition(let count, let selection):
            guard let channelID = event.channelID else { return selection == 0 }
            return Int(Self.hash(channelID) % UInt64(count)) == selection
        }
    }

    /// FNV-1a over the UUID's bytes (http://www.isthe.com/chongo/tech/comp/fnv/).
    static func hash(_ id: UUID) -> UInt64 {
        withUnsafeBytes(of: id.uuid) { bytes in
            bytes.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        }
    }
}
