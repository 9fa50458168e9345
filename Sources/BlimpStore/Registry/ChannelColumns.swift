import BlimpCore
import Foundation

/// A registration's values for the `channels` columns; `nil` leaves a column as it is.
struct ChannelColumns: Sendable {
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
    var quietTimeJSON: String? { self.quietTime?.json.text }

    /// The columns that have a value, as JSON members keyed by column name, for a row of a multi-row insert.
    var members: [RawJSON.Member] {
        let columns: [(String, RawJSON?)] = [
            ("opt_in", self.optIn.map(RawJSON.bool)),
            ("background", self.background.map(RawJSON.bool)),
            ("frequent_pushes_enabled", self.frequentPushes.map(RawJSON.bool)),
            ("alias", self.alias.map(RawJSON.string)),
            ("timezone", self.timezone.map(RawJSON.string)),
            ("locale_language", self.localeLanguage.map(RawJSON.string)),
            ("locale_country", self.localeCountry.map(RawJSON.string)),
            ("badge", self.badge.map { .integer(Int64($0)) }),
            ("quiet_time", self.quietTime?.json),
        ]
        return columns.compactMap { key, value in value.map { RawJSON.Member(key, $0) } }
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
