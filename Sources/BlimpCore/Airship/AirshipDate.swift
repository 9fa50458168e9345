import Foundation

/// Airship's date-time text: `YYYY-MM-DDTHH:MM:SS` in UTC, with no fraction and no `Z`.
///
/// The Python library parses channel dates with `%Y-%m-%dT%H:%M:%S` and silently turns anything else into
/// `"UNKNOWN"`; the iOS SDK accepts the same form for remote-data timestamps (docs/references.md#airship-channels-and-named-users,
/// docs/references.md#airship-ios-sdk-requests).
public enum AirshipDate {
    /// `date` in Airship's form, truncated to whole seconds; `separator` between date and time.
    public static func format(_ date: Date, separator: Character = "T") -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Digit by digit: `String(format:)` goes through printf, which shows in request profiles.
        let fields = [
            (Int(parts.tm_year) + 1900, 4), (Int(parts.tm_mon) + 1, 2), (Int(parts.tm_mday), 2),
            (Int(parts.tm_hour), 2), (Int(parts.tm_min), 2), (Int(parts.tm_sec), 2),
        ]
        let separators: [UInt8] = [UInt8(ascii: "-"), UInt8(ascii: "-"), separator.asciiValue ?? UInt8(ascii: "T"),
                                   UInt8(ascii: ":"), UInt8(ascii: ":")]
        return String(unsafeUninitializedCapacity: 19) { text in
            var offset = 0
            for (index, (value, width)) in fields.enumerated() {
                var rest = value
                for position in stride(from: offset + width - 1, through: offset, by: -1) {
                    text[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                offset += width
                if index < separators.count {
                    text[offset] = separators[index]
                    offset += 1
                }
            }
            return offset
        }
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
            (1...12).contains(month), (1...Self.days(inMonth: month, of: year)).contains(day), hour < 24, minute < 60, second < 61
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

    /// The days in `month` (1–12) of `year`, by the Gregorian calendar.
    private static func days(inMonth month: Int32, of year: Int32) -> Int32 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
