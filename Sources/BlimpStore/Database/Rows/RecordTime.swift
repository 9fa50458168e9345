import BlimpCore
import Foundation

/// A `timestamptz` in a JSON record, exact to the microsecond as postgres-nio binds a `Date`: an integer count of
/// microseconds since 2000-01-01 UTC.
enum RecordTime {
    private static let epoch = Date(timeIntervalSince1970: 946_684_800)

    /// `date` as the record's field.
    static func value(_ date: Date) -> RawJSON {
        .integer(Int64(date.timeIntervalSince(Self.epoch) * 1_000_000))
    }

    /// The SQL that turns such a field (`field`) back into a `timestamptz`.
    static func expression(_ field: String) -> String {
        "(timestamptz '2000-01-01 00:00:00+00' + \(field) * interval '1 microsecond')"
    }
}
