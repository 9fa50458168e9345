import BlimpCore
import PostgresNIO

/// An ``Audience`` as a SQL condition on a channel id column, with its bind values: what lets a worker's target
/// query stay one set-based statement however the audience nests. Tags match the channel's own tags and those of
/// its named user, as Airship's do.
struct AudienceFilter {
    private(set) var sql = ""
    private var parameters: QueryParameters

    /// The values bound before the filter's, then its own.
    var bindings: PostgresBindings { self.parameters.bindings }

    /// The condition that `channel` (a column such as `la.channel_id`) is in `audience`, for `appID`, and in `zone` when
    /// a local-time schedule fired the push for one time zone; its values are bound after those already in `bindings`.
    init(_ audience: Audience, channel: String, appID: Int64, zone: LocalTimeZone? = nil, after bindings: PostgresBindings) {
        self.parameters = QueryParameters(after: bindings)
        let app = self.parameters.bind(appID)
        self.sql = self.condition(audience, channel: channel, app: app)
        if let zone {
            // A channel without a zone PostgreSQL knows is in the app's default one.
            let name = self.parameters.bind(zone.name)
            let other = zone.isDefault ? " OR z.timezone IS NULL OR NOT EXISTS (SELECT 1 FROM time_zones t WHERE t.name = z.timezone)" : ""
            self.sql = "(\(self.sql)) AND EXISTS (SELECT 1 FROM channels z WHERE z.app_id = \(app) AND z.channel_id = \(channel) AND (z.timezone = \(name)\(other)))"
        }
    }

    private mutating func condition(_ audience: Audience, channel: String, app: String) -> String {
        switch audience {
        case .all:
            return "TRUE"
        case .channel(let id):
            return "\(channel) = \(self.parameters.bind(id))"
        case .namedUser(let id):
            let user = self.parameters.bind(id)
            return "EXISTS (SELECT 1 FROM channels n WHERE n.app_id = \(app) AND n.channel_id = \(channel) AND n.named_user_id = \(user))"
        case .tag(let tag, let group):
            // The channel's own tag is probed row by row (`OFFSET 0` keeps PostgreSQL from hashing every channel with
            // the tag, which costs as much as the tag is common, per batch). Its named user's tags are looked at only
            // when some named user has the tag at all: that check runs once per statement.
            let (tag, group) = (self.parameters.bind(tag), self.parameters.bind(group))
            return """
                (EXISTS (SELECT 1 FROM channel_tags t WHERE t.app_id = \(app) AND t.tag_group = \(group) AND t.tag = \(tag) \
                AND t.channel_id = \(channel) OFFSET 0) \
                OR (EXISTS (SELECT 1 FROM named_user_tags g WHERE g.app_id = \(app) AND g.tag_group = \(group) AND g.tag = \(tag)) \
                AND EXISTS (SELECT 1 FROM channels n JOIN named_user_tags u ON u.app_id = n.app_id AND u.named_user_id = n.named_user_id \
                WHERE n.app_id = \(app) AND n.channel_id = \(channel) AND u.tag_group = \(group) AND u.tag = \(tag))))
                """
        case .and(let children):
            return self.join(children, "AND", channel: channel, app: app)
        case .or(let children):
            return self.join(children, "OR", channel: channel, app: app)
        case .not(let child):
            return "NOT " + self.condition(child, channel: channel, app: app)
        }
    }

    private mutating func join(_ children: [Audience], _ operator: String, channel: String, app: String) -> String {
        var conditions: [String] = []
        for child in children { conditions.append(self.condition(child, channel: channel, app: app)) }
        return "(" + conditions.joined(separator: " \(`operator`) ") + ")"
    }
}
