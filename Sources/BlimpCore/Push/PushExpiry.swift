import Foundation

/// When APNs may stop trying to deliver a push (`options.expiry` or `ios.expiry`): seconds after acceptance, or an
/// absolute time (`YYYY-MM-DDTHH:MM:SS`, UTC). `0` means deliver now or never.
public enum PushExpiry: Sendable, Equatable {
    case after(seconds: Int64)
    case at(Date)

    /// The expiry in `reader`'s `key`, if any.
    static func parse(_ reader: JSONObjectReader, _ key: String) throws(InvalidField) -> PushExpiry? {
        guard let value = reader.raw(key) else { return nil }
        switch value {
        case .number:
            return .after(seconds: try reader.integer(key, in: 0...(30 * 24 * 3600))!)
        case .string(let text):
            guard let date = AirshipDate.parse(text), TimeWindow.seconds.contains(Int64(date.timeIntervalSince1970)) else {
                throw InvalidField(reader.path(of: key), "expected seconds or a time from 1970 through 2199 as YYYY-MM-DDTHH:MM:SS")
            }
            return .at(date)
        default:
            throw reader.wrongKind(key, "seconds or a time as YYYY-MM-DDTHH:MM:SS", value)
        }
    }

    /// The absolute time for a push accepted at `acceptedAt`.
    public func date(acceptedAt: Date) -> Date {
        switch self {
        case .after(let seconds): acceptedAt.addingTimeInterval(TimeInterval(seconds))
        case .at(let date): date
        }
    }
}
