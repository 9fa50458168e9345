/// A JSON number as its literal (kept for writing back) and its value (for comparing numerically: `1.0` equals `1`).
/// Integers within 64 bits compare exactly; everything else as a `Double`.
public struct JSONNumber: Sendable, Equatable, CustomStringConvertible {
    public let literal: String
    public let value: Double
    /// The value when it is a whole number within 64 bits (`1`, `1.0`, `1e2`); `nil` for `1.5` or `1e30`.
    public let integer: Int64?

    /// `nil` when the literal is not a finite number (`1e400` is too large for a `Double`).
    public init?(_ literal: String) {
        guard let value = Double(literal), value.isFinite else { return nil }
        self.literal = literal
        self.value = value
        self.integer = Int64(literal) ?? Int64(exactly: value)
    }

    public init(_ integer: Int64) {
        self.literal = String(integer)
        self.value = Double(integer)
        self.integer = integer
    }

    public var json: RawJSON { .number(self.literal) }
    public var description: String { self.literal }

    /// Whether the two are the same number, whatever their literals.
    public func isSameValue(as other: JSONNumber) -> Bool {
        if let integer, let otherInteger = other.integer { return integer == otherInteger }
        return self.value == other.value
    }

    /// Whether this number is less than `other`.
    public func isLess(than other: JSONNumber) -> Bool {
        if let integer, let otherInteger = other.integer { return integer < otherInteger }
        return self.value < other.value
    }
}
