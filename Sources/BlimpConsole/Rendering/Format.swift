import BlimpCore
import Foundation

/// How the console writes times, ages, tokens and numbers.
enum Format {
    /// `2026-11-23 20:15:03 UTC`.
    static func time(_ date: Date) -> String { AirshipDate.format(date, separator: " ") + " UTC" }

    /// `42 s`, `7 min`, `3 h 20 min`, `2 d 4 h`: how long ago `date` was, to the nearest second (a time read back from
    /// PostgreSQL is rounded to the microsecond, and may come back a hair later than it was written).
    static func age(_ date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date).rounded()))
        switch seconds {
        case ..<60: return "\(seconds) s"
        case ..<3600: return "\(seconds / 60) min"
        case ..<86400: return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
        default: return "\(seconds / 86400) d \(seconds % 86400 / 3600) h"
        }
    }

    /// The first 8 characters of a token, then an ellipsis: enough to tell tokens apart, too little to use one.
    static func tokenPrefix(_ token: String) -> String { String(token.prefix(8)) + "…" }

    /// `1,234,567`.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// `json` indented two spaces a level, one member or element a line.
    static func indented(_ json: RawJSON, level: Int = 0) -> String {
        let inner = String(repeating: "  ", count: level + 1)
        let outer = String(repeating: "  ", count: level)
        switch json {
        case .object(let members) where !members.isEmpty:
            let lines = members.map { inner + RawJSON.string($0.key).text + ": " + Self.indented($0.value, level: level + 1) }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + outer + "}"
        case .array(let elements) where !elements.isEmpty:
            return "[\n" + elements.map { inner + Self.indented($0, level: level + 1) }.joined(separator: ",\n") + "\n" + outer + "]"
        default:
            return json.text
        }
    }

    /// An APNs status as people read it.
    static func status(_ status: Int, reason: APNsReason?) -> String {
        switch status {
        case 0: "no answer"
        case 200: "200 delivered"
        default: "\(status) \(reason?.rawValue ?? "")"
        }
    }
}
