import BlimpCore
import Foundation

/// A registration's values for the `channels` columns; `nil` leaves a column as it is. Encoded, the keys are the
/// column names.
struct ChannelColumns: Encodable, Sendable {
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

    enum CodingKeys: String, CodingKey {
        case background, alias, timezone, badge
        case optIn = "opt_in"
        case frequentPushes = "frequent_pushes_enabled"
        case localeLanguage = "locale_language"
        case localeCountry = "locale_country"
        case quietTime = "quiet_time"
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
