import Foundation

/// The instants Blimp takes from outside as numbers: from 1970 through 2199. Wide enough for a phone whose clock is
/// years off, and narrow enough that every such instant converts to `Date`, to postgres-nio's microseconds and to
/// PostgreSQL's timestamps without overflow (a value past that range once trapped the API process).
public enum TimeWindow {
    /// Epoch seconds, 1970-01-01 through 2199-12-31.
    public static let seconds: ClosedRange<Int64> = 0...7_258_118_399
    /// Epoch milliseconds over the same span.
    public static let milliseconds: ClosedRange<Int64> = 0...7_258_118_399_999

    /// The instant `milliseconds` after the epoch; the caller has checked the range.
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
