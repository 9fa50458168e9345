import BlimpCore
import Foundation
import PostgresNIO

/// What the console's channel search looks for.
public enum ChannelSearch: Sendable, Equatable {
    case all
    case channel(UUID)
    /// Channels whose device token starts with these lower-case hex digits.
    case tokenPrefix(String)
    case tag(String, group: String)
    case namedUser(String)
}

/// One channel in a list of search results.
public struct ChannelSummary: Sendable, Equatable {
    public var channelID: UUID
    public var pushAddress: String?
    public var optIn: Bool
    public var installed: Bool
    public var namedUserID: String?
    public var lastRegistration: Date

    /// What a search selects of a channel (`c`), each column by name.
    enum Column: String, SelectedColumn {
        case channelID = "channel_id", pushAddress = "push_address", optIn = "opt_in", installed
        case namedUserID = "named_user_id", lastRegistration = "last_registration"

        var expression: String { "c.\(self.rawValue)" }
    }

    /// The channel in `row`, or the column that cannot be read.
    init(_ row: NamedRow<Column>) throws(UnreadableColumn) {
        self.channelID = try row.decode(.channelID)
        self.pushAddress = try row.decode(.pushAddress)
        self.optIn = try row.decode(.optIn)
        self.installed = try row.decode(.installed)
        self.namedUserID = try row.decode(.namedUserID)
        self.lastRegistration = try row.decode(.lastRegistration)
    }
}

/// What APNs answered one token of a channel.
public struct TokenOutcome: Sendable, Equatable {
    public var token: String
    public var pushID: UUID
    public var status: Int
    public var reason: APNsReason?
    public var priority: Int?
    public var sentAt: Date

    /// What a channel's outcomes select of each, by name.
    enum Column: String, SelectedColumn {
        case token, pushID = "push_id", status, reason, priority, sentAt = "sent_at"

        var expression: String {
            switch self {
            case .status, .priority: "\(self.rawValue)::int"
            case .token, .pushID, .reason, .sentAt: self.rawValue
            }
        }
    }

    /// The outcome in `row`, or the column that cannot be read.
    init(_ row: NamedRow<Column>) throws(UnreadableColumn) {
        self.token = try row.decode(.token)
        self.pushID = try row.decode(.pushID)
        self.status = try row.decode(.status)
        self.reason = try row.decode(.reason)
        self.priority = try row.decode(.priority)
        self.sentAt = try row.decode(.sentAt)
    }
}

extension ConsoleStore {
    /// A page of channels matching `search`, after `cursor` (the last page's ``nextCursor(after:search:)``), in the
    /// order of an index, so that each page reads only itself.
    public func channels(
        _ search: ChannelSearch, appID: Int64, after cursor: String?, limit: Int
    ) async throws(StoreError) -> [ChannelSummary] {
        let columns = ChannelSummary.Column.selectList
        let afterID = cursor.flatMap { UUID(parsing: $0) } ?? ChannelIDRange.all.after
        let query: PostgresQuery
        switch search {
        case .all:
            query = """
                SELECT \(unescaped: columns) FROM channels c WHERE c.app_id = \(appID) AND c.channel_id > \(afterID)
                ORDER BY c.channel_id LIMIT \(limit)
                """
        case .channel(let id):
            query = "SELECT \(unescaped: columns) FROM channels c WHERE c.app_id = \(appID) AND c.channel_id = \(id)"
        case .tokenPrefix(let prefix):
            // A range of the device-token index: `g` sorts after every hex digit.
            query = """
                SELECT \(unescaped: columns) FROM channels c
                WHERE c.app_id = \(appID) AND c.push_address >= \(prefix) AND c.push_address < \(prefix + "g")
                  AND c.push_address > \(cursor ?? "")
                ORDER BY c.push_address LIMIT \(limit)
                """
        case .tag(let tag, let group):
            query = """
                SELECT \(unescaped: columns) FROM channel_tags t JOIN channels c ON c.app_id = t.app_id AND c.channel_id = t.channel_id
                WHERE t.app_id = \(appID) AND t.tag_group = \(group) AND t.tag = \(tag) AND t.channel_id > \(afterID)
                ORDER BY t.channel_id LIMIT \(limit)
                """
        case .namedUser(let id):
            query = """
                SELECT \(unescaped: columns) FROM channels c
                WHERE c.app_id = \(appID) AND c.named_user_id = \(id) AND c.channel_id > \(afterID)
                ORDER BY c.channel_id LIMIT \(limit)
                """
        }
        return try await StoreError.mapping {
            var summaries: [ChannelSummary] = []
            let rows = try await self.client.query(query, logger: self.logger)
            for try await row in rows { summaries.append(try ChannelSummary(NamedRow(row))) }
            return summaries
        }
    }

    /// The cursor of the page after one ending with `last`.
    public static func nextCursor(after last: ChannelSummary, search: ChannelSearch) -> String {
        if case .tokenPrefix = search { return last.pushAddress ?? "" }
        return last.channelID.lowercaseString
    }

    /// The channel's newest APNs outcomes, newest first.
    public func outcomes(channelID: UUID, appID: Int64, limit: Int) async throws(StoreError) -> [TokenOutcome] {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: TokenOutcome.Column.selectList) FROM delivery_outcomes
                WHERE app_id = \(appID) AND channel_id = \(channelID) ORDER BY sent_at DESC LIMIT \(limit)
                """,
                logger: self.logger)
            var outcomes: [TokenOutcome] = []
            for try await row in rows { outcomes.append(try TokenOutcome(NamedRow(row))) }
            return outcomes
        }
    }
}
