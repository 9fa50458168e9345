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
}

/// What APNs answered one token of a channel.
public struct TokenOutcome: Sendable, Equatable {
    public var token: String
    public var pushID: UUID
    public var status: Int
    public var reason: APNsReason?
    public var priority: Int?
    public var sentAt: Date
}

extension ConsoleStore {
    /// A page of channels matching `search`, after `cursor` (the last page's ``nextCursor(after:search:)``), in the
    /// order of an index, so that each page reads only itself.
    public func channels(
        _ search: ChannelSearch, appID: Int64, after cursor: String?, limit: Int
    ) async throws(StoreError) -> [ChannelSummary] {
        let columns = "c.channel_id, c.push_address, c.opt_in, c.installed, c.named_user_id, c.last_registration"
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
            for try await (id, address, optIn, installed, namedUser, registered) in rows.decode((UUID, String?, Bool, Bool, String?, Date).self) {
                summaries.append(ChannelSummary(
                    channelID: id, pushAddress: address, optIn: optIn, installed: installed, namedUserID: namedUser,
                    lastRegistration: registered))
            }
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
                SELECT token, push_id, status::int, reason, priority::int, sent_at FROM delivery_outcomes
                WHERE app_id = \(appID) AND channel_id = \(channelID) ORDER BY sent_at DESC LIMIT \(limit)
                """,
                logger: self.logger)
            var outcomes: [TokenOutcome] = []
            for try await (token, pushID, status, reason, priority, sentAt) in rows.decode((String, UUID, Int, String?, Int?, Date).self) {
                outcomes.append(TokenOutcome(token: token, pushID: pushID, status: status, reason: reason.map(APNsReason.init(rawValue:)), priority: priority, sentAt: sentAt))
            }
            return outcomes
        }
    }
}
