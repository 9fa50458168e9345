/// An event's place in its app's stream: the PostgreSQL transaction that committed it (`xid8`, which never wraps) and
/// its row id within the log. Streams are read in this order, and only below the oldest transaction still running, so
/// an event is never read after one with a higher offset: every transaction below that horizon has ended
/// (https://www.postgresql.org/docs/current/functions-info.html#FUNCTIONS-PG-SNAPSHOT).
///
/// Its text, the `offset` clients resume from, is one decimal number: the transaction, then the id in 19 digits, so
/// that offsets compare as numbers. Gaps are normal.
public struct EventOffset: Sendable, Hashable, Comparable {
    public var transaction: UInt64
    public var id: Int64

    public init(transaction: UInt64, id: Int64) {
        self.transaction = transaction
        self.id = id
    }

    /// Before every event.
    public static let start = EventOffset(transaction: 0, id: 0)

    private static let idDigits = 19

    /// The decimal text of the offset.
    public var text: String {
        let id = String(self.id)
        let padded = String(repeating: "0", count: Self.idDigits - id.count) + id
        return self.transaction == 0 ? String(self.id) : String(self.transaction) + padded
    }

    /// An offset's text as ``text`` writes it; `nil` for anything else.
    public init?(parsing text: String) {
        guard !text.isEmpty, text.utf8.count <= 20 + Self.idDigits, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let split = text.index(text.endIndex, offsetBy: -min(Self.idDigits, text.count))
        guard let id = Int64(text[split...]), let transaction = split == text.startIndex ? 0 : UInt64(text[..<split]) else {
            return nil
        }
        self.init(transaction: transaction, id: id)
    }

    public static func < (lhs: EventOffset, rhs: EventOffset) -> Bool {
        (lhs.transaction, lhs.id) < (rhs.transaction, rhs.id)
    }
}
