import BlimpCore
import Foundation

/// A registration's values for the `channels` columns; `nil` leaves a column as it is. As a ``JSONRow``, the keys
/// are the column names.
struct ChannelColumns: JSONRow, Sendable {
    var optIn: Bool?
    var background: Bool?
    var frequentPushes: Bool?
    var alias: String?
    /// `channel.ios.tz`, else `channel.timezone`.
    var timezone: String?
    var localeLanguage: String?
    var localeCountry: String?
    var badge: Int?
    var quietTime: ChannelRegistration.QuietTime?

    init(_ registration: CheckedChannelRegistration) {
        let fields = registration.fields
        self.optIn = fields.optIn
        self.background = fields.background
        self.frequentPushes = fields.ios?.frequentPushesEnabled
        self.alias = fields.alias
        self.timezone = fields.ios?.tz ?? fields.timezone
        self.localeLanguage = fields.localeLanguage
        self.localeCountry = fields.localeCountry
        self.badge = fields.ios?.badge
        self.quietTime = fields.ios?.quietTime
    }

    /// `quiet_time` as JSON text, for a `jsonb` parameter.
    var quietTimeJSON: String? { self.quietTime.flatMap { try? JSONText($0).text } }

    func write(to object: inout JSONObjectWriter) {
        object.write("opt_in", self.optIn)
        object.write("background", self.background)
        object.write("frequent_pushes_enabled", self.frequentPushes)
        object.write("alias", self.alias)
        object.write("timezone", self.timezone)
        object.write("locale_language", self.localeLanguage)
        object.write("locale_country", self.localeCountry)
        object.write("badge", self.badge)
        object.write("quiet_time", object: self.quietTime.map(QuietTimeRow.init))
    }

    /// `quiet_time` as Airship shows it: both keys, `null` when unset.
    private struct QuietTimeRow: JSONRow {
        let quietTime: ChannelRegistration.QuietTime

        func write(to object: inout JSONObjectWriter) {
            for (key, value) in [("start", self.quietTime.start), ("end", self.quietTime.end)] {
                if let value { object.write(key, value) } else { object.writeNull(key) }
            }
        }
    }
}

/// A value as JSON text, for `jsonb` parameters.
struct JSONText {
    let text: String

    init(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        self.text = String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
