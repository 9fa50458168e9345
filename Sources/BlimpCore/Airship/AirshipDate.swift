import Foundation

/// Airship's date-time text: `YYYY-MM-DDTHH:MM:SS` in UTC, with no fraction and no `Z`.
///
/// The Python library parses channel dates with `%Y-%m-%dT%H:%M:%S` and silently turns anything else into
/// `"UNKNOWN"`; the iOS SDK accepts the same form for remote-data timestamps (reference: airship-api.md §2.1,
/// airship-ios-sdk.md §4.1).
public enum AirshipDate {
    /// `date` in Airship's form, truncated to whole seconds.
    public static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec)
        )
    }

    /// Parses the forms the SDK sends in `X-UA-Timestamp`: `YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DDTHH:MM:SS`, each
    /// optionally followed by a fraction and `Z`. Always UTC.
    public static func parse(_ text: String) -> Date? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 19, utf8[4] == UInt8(ascii: "-"), utf8[7] == UInt8(ascii: "-"),
            utf8[10] == UInt8(ascii: "T") || utf8[10] == UInt8(ascii: " "),
            utf8[13] == UInt8(ascii: ":"), utf8[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in utf8[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let rest = utf8[19...]
        let tailIsValid = rest.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "Z")
        }
        guard tailIsValid, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
