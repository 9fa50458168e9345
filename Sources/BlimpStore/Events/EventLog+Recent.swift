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

    /// How many of the log's newest rows (before the page's start) a filtered read looks through: the log has no index
    /// by channel or push (a fan-out writes a row per token), so a filter is applied to this many at most.
    public static let recentWindow = 200_000

    /// Up to `limit` of the app's events that `filter` matches, newest first, before `offset` (the newest when `nil`),
    /// among the ``recentWindow`` rows before it. Unlike a stream, the console reads what has committed, whatever is running.
    public func recent(appID: Int64, matching filter: RecentFilter, before offset: EventOffset?, limit: Int) async throws(StoreError) -> [StreamedEvent] {
        let before = offset ?? EventOffset(transaction: UInt64.max, id: Int64.max)
        var parameters = QueryParameters()
        let app = parameters.bind(appID)
        let transaction = parameters.bind(String(before.transaction)) + "::xid8"
        let id = parameters.bind(before.id)
        let type = parameters.bind(filter.type?.rawValue)
        let channel = parameters.bind(filter.channelID)
        let push = parameters.bind(filter.pushID)
        let limit = parameters.bind(limit)
        // From the end of the offset's transaction: the row holding the offset may have a higher id.
        let window = """
            (SELECT * FROM events WHERE app_id = \(app) AND xid <= \(transaction) ORDER BY xid DESC, id DESC LIMIT \(Self.recentWindow))
            """
        return try await self.read(parameters.query("""
            SELECT \(Selected.selectList)
            FROM \(Self.rows(window))
            LEFT JOIN channels c ON c.app_id = e.app_id AND c.channel_id = e.channel_id
            LEFT JOIN pushes p ON p.app_id = e.app_id AND p.push_id = \(Selected.pushID.expression)
            WHERE (e.xid, \(Selected.id.expression)) < (\(transaction), \(id))
              AND (\(type)::text IS NULL OR e.type = \(type)::text)
              AND (\(channel)::uuid IS NULL OR e.channel_id = \(channel)::uuid)
              AND (\(push)::uuid IS NULL OR \(Selected.pushID.expression) = \(push)::uuid)
            ORDER BY e.xid DESC, e.id DESC, m.n DESC
            LIMIT \(limit)
            """))
    }
}
