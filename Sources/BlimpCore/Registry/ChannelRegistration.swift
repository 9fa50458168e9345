/// The `channel` object of a channel registration (`POST /api/channels`, `PUT /api/channels/{id}`), as the Airship iOS
/// SDK sends it (docs/references.md#airship-ios-sdk-requests).
///
/// Every field is optional: updates are minimized, so an absent field leaves the stored value as it is. Fields Blimp
/// has no use for (SDK and OS versions, device model, permissions) are accepted and ignored.
public struct ChannelRegistration: Sendable, Equatable {
    public var deviceType: String?
    public var optIn: Bool?
    public var background: Bool?
    /// The device's alert token, as sent (see ``checked()``).
    public var pushAddress: String?
    /// Whether `tags` replaces the channel's `device` tag group.
    public var setTags: Bool?
    public var tags: [String]?
    public var tagChanges: TagChanges?
    public var localeLanguage: String?
    public var localeCountry: String?
    public var timezone: String?
    public var alias: String?
    public var ios: IOS?

    /// `tag_changes`: the SDK's minimized form of `tags`.
    public struct TagChanges: Sendable, Equatable {
        public var add: [String]?
        public var remove: [String]?
    }

    /// `channel.ios`.
    public struct IOS: Sendable, Equatable {
        public var badge: Int?
        public var quietTime: QuietTime?
        public var tz: String?
        /// Blimp's extension: `ActivityAuthorizationInfo().frequentPushesEnabled`, which the priority budget reads.
        public var frequentPushesEnabled: Bool?
    }

    /// `channel.ios.quiettime`: `HH:MM` strings, or null.
    public struct QuietTime: Codable, Sendable, Equatable {
        public var start: String?
        public var end: String?

        /// Both keys, `null` when unset, as Airship shows them (and as the `channels.quiet_time` column keeps them).
        public var json: RawJSON {
            .object([.init("start", self.start.map(RawJSON.string) ?? .null), .init("end", self.end.map(RawJSON.string) ?? .null)])
        }

        /// Both keys, `null` when unset, as Airship shows them.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.start, forKey: .start)
            try container.encode(self.end, forKey: .end)
        }

        enum CodingKeys: String, CodingKey {
            case start, end
        }
    }

    /// Reads the `channel` object found at `path`. Absent and `null` fields are `nil`; keys Blimp has no use for are
    /// ignored.
    public init(json: RawJSON, at path: String) throws(InvalidField) {
        let channel = try JSONObjectReader(json, at: path, allowed: nil)
        self.deviceType = try channel.string("device_type", allowsEmpty: true)
        self.optIn = try channel.bool("opt_in")
        self.background = try channel.bool("background")
        self.pushAddress = try channel.string("push_address", allowsEmpty: true)
        self.setTags = try channel.bool("set_tags")
        self.tags = try channel.strings("tags")
        self.tagChanges = try channel.reader("tag_changes", allowed: nil).map { changes throws(InvalidField) in
            TagChanges(add: try changes.strings("add"), remove: try changes.strings("remove"))
        }
        self.localeLanguage = try channel.string("locale_language", allowsEmpty: true)
        self.localeCountry = try channel.string("locale_country", allowsEmpty: true)
        self.timezone = try channel.string("timezone", allowsEmpty: true)
        self.alias = try channel.string("alias", allowsEmpty: true)
        self.ios = try channel.reader("ios", allowed: nil).map { ios throws(InvalidField) in
            IOS(
                badge: try ios.integer("badge", in: Int64(Int32.min)...Int64(Int32.max)).map(Int.init),
                quietTime: try ios.reader("quiettime", allowed: nil).map { quietTime throws(InvalidField) in
                    QuietTime(start: try quietTime.string("start", allowsEmpty: true), end: try quietTime.string("end", allowsEmpty: true))
                },
                tz: try ios.string("tz", allowsEmpty: true),
                frequentPushesEnabled: try ios.bool("frequent_pushes_enabled")
            )
        }
    }

    /// The registration with its push address in lower-case hex and the `device` tag changes it asks for, or the
    /// first field that breaks a rule (paths relative to `channel`). Tags that break a rule are skipped, not refused
    /// (they come from the app's code, and a refused registration would leave the device without a channel): the
    /// registration keeps no tag change, and ``CheckedChannelRegistration/skipped`` says why.
    public func checked() throws(InvalidField) -> CheckedChannelRegistration {
        if let deviceType = self.deviceType, deviceType != "ios" {
            throw InvalidField("device_type", "Blimp serves iOS channels only (device_type \"ios\")")
        }
        let pushAddress = try self.pushAddress.map { text throws(InvalidField) in
            try PushToken.normalize(text, path: "push_address")
        }
        var tags = TagOperations()
        if self.setTags == true, let set = self.tags { tags.set[TagOperations.deviceGroup] = set }
        if let add = self.tagChanges?.add, !add.isEmpty { tags.add[TagOperations.deviceGroup] = add }
        if let remove = self.tagChanges?.remove, !remove.isEmpty { tags.remove[TagOperations.deviceGroup] = remove }
        var skipped: [InvalidField] = []
        do {
            try tags.validate(exclusiveSet: false)
        } catch {
            skipped.append(InvalidField("tags", error.message))
            tags = TagOperations()
        }
        for (path, text) in [("locale_language", self.localeLanguage), ("locale_country", self.localeCountry),
                             ("timezone", self.timezone), ("alias", self.alias), ("ios.tz", self.ios?.tz)] {
            if let text { try TextLimit.label.check(text, at: path, path) }
        }
        return CheckedChannelRegistration(fields: self, pushAddress: pushAddress, tags: tags, skipped: skipped)
    }
}

/// A ``ChannelRegistration`` that passed its checks.
public struct CheckedChannelRegistration: Sendable, Equatable {
    public let fields: ChannelRegistration
    /// The push address in lower-case hex, if the registration carries one.
    public let pushAddress: String?
    /// The changes to the `device` tag group.
    public let tags: TagOperations
    /// What was left out, and why (paths relative to `channel`).
    public let skipped: [InvalidField]
}
