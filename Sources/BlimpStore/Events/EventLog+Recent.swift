import BlimpCore
import Foundation
import PostgresNIO

extension EventLog {
    /// What the console narrows an app's recent events to: each given field must match.
    public struct RecentFilter: Sendable, Equatable {
        public var type: EventType?
        public var channelID: UUID?
        public var pushID: UUID?

        public init(type: EventType? = nil, channelID: UUID? = nil, pushID: UUID? = nil) {
            self.type = type
            self.channelID = channelID
            self.pushID = pushID
        }
    }

    /// How many of the app's newest events (before the page's start) a filtered read looks through: the log has no index
    /// by channel or push (a fan-out writes a row per token), so a filter is applied to this many at most.
    public static let recentWindow = 200_000

    /// Up to `limit` of the app's events that `filter` matches, newest first, before `offset` (the newest when `nil`),
    /// among the ``recentWindow`` before it. Unlike a stream, the console reads what has committed, whatever is running.
    public func recent(appID: Int64, matching filter: RecentFilter, before offset: EventOffset?, limit: Int) async throws(StoreError) -> [StreamedEvent] {
        let before = offset ?? EventOffset(transaction: UInt64.max, id: Int64.max)
        let query: PostgresQuery = """
            SELECT \(unescaped: Selected.selectList)
            FROM (SELECT * FROM events
                  WHERE app_id = \(appID) AND (xid, id) < (\(String(before.transaction))::xid8, \(before.id))
                  ORDER BY xid DESC, id DESC LIMIT \(Self.recentWindow)) AS e
            LEFT JOIN channels c ON c.app_id = e.app_id AND c.channel_id = e.channel_id
            LEFT JOIN pushes p ON p.app_id = e.app_id AND p.push_id = e.push_id
            WHERE (\(filter.type?.rawValue)::text IS NULL OR e.type = \(filter.type?.rawValue)::text)
              AND (\(filter.channelID)::uuid IS NULL OR e.channel_id = \(filter.channelID)::uuid)
              AND (\(filter.pushID)::uuid IS NULL OR e.push_id = \(filter.pushID)::uuid)
            ORDER BY e.xid DESC, e.id DESC
            LIMIT \(limit)
            """
        return try await self.read(query)
    }
}
