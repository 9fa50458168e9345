import Foundation

/// A channel as the server API shows it (`GET /api/channels/{id}`): Airship's channel object plus Blimp's
/// `live_activities`, `push_to_start_tokens` and `push_to_start_tokens_updated` (docs/references.md#airship-channels-and-named-users).
public struct ChannelRecord: Sendable, Equatable, Encodable {
    public var channelID: UUID
    public var installed: Bool
    public var optIn: Bool
    public var background: Bool
    public var pushAddress: String?
    public var created: Date
    public var lastRegistration: Date
    public var namedUserID: String?
    public var alias: String?
    /// Every tag group with its tags, sorted; `tags` shows the `device` group.
    public var tagGroups: [String: [String]]
    public var badge: Int?
    public var quietTime: ChannelRegistration.QuietTime?
    public var timezone: String?
    public var frequentPushesEnabled: Bool
    public var attributes: [String: JSONValue]
    public var liveActivities: [LiveActivityRecord]
    /// Push-to-start tokens by `ActivityAttributes` type.
    public var pushToStartTokens: [String: String]
    /// When the device last reported each push-to-start token, by type: a token the device stopped refreshing shows.
    public var pushToStartTokensUpdated: [String: Date]

    public init(
        channelID: UUID, installed: Bool, optIn: Bool, background: Bool, pushAddress: String?, created: Date,
        lastRegistration: Date, namedUserID: String?, alias: String?, tagGroups: [String: [String]], badge: Int?,
        quietTime: ChannelRegistration.QuietTime?, timezone: String?, frequentPushesEnabled: Bool,
        attributes: [String: JSONValue], liveActivities: [LiveActivityRecord], pushToStartTokens: [String: String],
        pushToStartTokensUpdated: [String: Date] = [:]
    ) {
        self.channelID = channelID
        self.installed = installed
        self.optIn = optIn
        self.background = background
        self.pushAddress = pushAddress
        self.created = created
        self.lastRegistration = lastRegistration
        self.namedUserID = namedUserID
        self.alias = alias
        self.tagGroups = tagGroups
        self.badge = badge
        self.quietTime = quietTime
        self.timezone = timezone
        self.frequentPushesEnabled = frequentPushesEnabled
        self.attributes = attributes
        self.liveActivities = liveActivities
        self.pushToStartTokens = pushToStartTokens
        self.pushToStartTokensUpdated = pushToStartTokensUpdated
    }

    enum CodingKeys: String, CodingKey {
        case installed, background, created, alias, tags, ios, attributes
        case channelID = "channel_id"
        case deviceType = "device_type"
        case optIn = "opt_in"
        case pushAddress = "push_address"
        case lastRegistration = "last_registration"
        case namedUserID = "named_user_id"
        case tagGroups = "tag_groups"
        case liveActivities = "live_activities"
        case pushToStartTokens = "push_to_start_tokens"
        case pushToStartTokensUpdated = "push_to_start_tokens_updated"
    }

    enum IOSKeys: String, CodingKey {
        case badge, tz
        case quietTime = "quiettime"
        case frequentPushesEnabled = "frequent_pushes_enabled"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.channelID.uuidString.lowercased(), forKey: .channelID)
        try container.encode("ios", forKey: .deviceType)
        try container.encode(self.installed, forKey: .installed)
        try container.encode(self.optIn, forKey: .optIn)
        try container.encode(self.background, forKey: .background)
        try container.encode(self.pushAddress, forKey: .pushAddress)
        try container.encode(AirshipDate.format(self.created), forKey: .created)
        try container.encode(AirshipDate.format(self.lastRegistration), forKey: .lastRegistration)
        try container.encode(self.namedUserID, forKey: .namedUserID)
        try container.encode(self.alias, forKey: .alias)
        try container.encode(self.tagGroups[TagOperations.deviceGroup] ?? [], forKey: .tags)
        try container.encode(self.tagGroups, forKey: .tagGroups)
        var ios = container.nestedContainer(keyedBy: IOSKeys.self, forKey: .ios)
        try ios.encode(self.badge ?? 0, forKey: .badge)
        try ios.encode(self.quietTime ?? .init(start: nil, end: nil), forKey: .quietTime)
        try ios.encode(self.timezone, forKey: .tz)
        try ios.encode(self.frequentPushesEnabled, forKey: .frequentPushesEnabled)
        try container.encode(self.attributes, forKey: .attributes)
        try container.encode(self.liveActivities, forKey: .liveActivities)
        try container.encode(self.pushToStartTokens, forKey: .pushToStartTokens)
        try container.encode(self.pushToStartTokensUpdated.mapValues { AirshipDate.format($0) }, forKey: .pushToStartTokensUpdated)
    }
}

/// A named user as `GET /api/named_users?id=` shows it (https://docs.airship.com/developer/rest-api/ua/operations/named-users/).
public struct NamedUserRecord: Sendable, Equatable, Encodable {
    public var namedUserID: String
    public var created: Date
    public var lastModified: Date
    public var tags: [String: [String]]
    public var channels: [ChannelRecord]
    /// Where the channels not listed begin, when the named user has more than one answer lists (the API links to
    /// them as `channels_next_page`).
    public var moreChannelsFrom: UUID?

    public init(
        namedUserID: String, created: Date, lastModified: Date, tags: [String: [String]], channels: [ChannelRecord], moreChannelsFrom: UUID? = nil
    ) {
        self.namedUserID = namedUserID
        self.created = created
        self.lastModified = lastModified
        self.tags = tags
        self.channels = channels
        self.moreChannelsFrom = moreChannelsFrom
    }

    enum CodingKeys: String, CodingKey {
        case created, tags, attributes, channels
        case namedUserID = "named_user_id"
        case lastModified = "last_modified"
        case subscriptionLists = "subscription_lists"
        case userAttributes = "user_attributes"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.namedUserID, forKey: .namedUserID)
        try container.encode(AirshipDate.format(self.created), forKey: .created)
        try container.encode(AirshipDate.format(self.lastModified), forKey: .lastModified)
        try container.encode(self.tags, forKey: .tags)
        try container.encode([String: String](), forKey: .attributes)
        try container.encode(self.channels, forKey: .channels)
        try container.encode([String](), forKey: .subscriptionLists)
        try container.encode([String: String](), forKey: .userAttributes)
    }
}
