import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Reads whole ``ChannelRecord``s for a set of channels in one query: each channel's tags, activities
/// (``LiveActivityRecords``) and push-to-start tokens come along as JSON.
struct ChannelRecords {
    let appID: Int64
    let now: Date
    let logger: Logger

    /// What the query selects of a channel (`c`), each column by name; its activities come from a lateral join
    /// (`activity_list`), which binds what ``LiveActivityRecords`` reads.
    enum Column: String, SelectedColumn {
        case channelID = "channel_id", installed, optIn = "opt_in", background, pushAddress = "push_address"
        case createdAt = "created_at", lastRegistration = "last_registration", namedUserID = "named_user_id", alias, badge
        case quietTime = "quiet_time", timezone, frequentPushes = "frequent_pushes_enabled", attributes
        case tags, activities, startTokens = "start_tokens"

        var expression: String {
            switch self {
            case .quietTime, .attributes: "c.\(self.rawValue)::text"
            case .tags:
                """
                (SELECT coalesce(json_agg(json_build_array(t.tag_group, t.tag) ORDER BY t.tag_group, t.tag), '[]')
                 FROM channel_tags t WHERE t.app_id = c.app_id AND t.channel_id = c.channel_id)::text
                """
            case .activities: "activity_list.json"
            case .startTokens:
                """
                (SELECT coalesce(json_object_agg(p.attributes_type, json_build_object(
                            'token', p.token, 'updated_at', extract(epoch FROM p.updated_at))), '{}')
                 FROM push_to_start_tokens p
                 WHERE p.app_id = c.app_id AND p.channel_id = c.channel_id AND p.token IS NOT NULL)::text
                """
            default: "c.\(self.rawValue)"
            }
        }
    }

    /// The app's channels among `channelIDs`, in that order, each with every Live Activity on record (those within 12
    /// hours of their start, and starts awaiting their token) in its state at `now`.
    func fetch(_ channelIDs: [UUID], client: Database) async throws -> [ChannelRecord] {
        var parameters = QueryParameters()
        let activities = LiveActivityRecords(appID: self.appID, now: self.now, binding: &parameters)
        let keys = """
            (SELECT channel_id, name FROM live_activities WHERE app_id = \(activities.app) AND channel_id = c.channel_id
             UNION SELECT channel_id, name FROM awaiting_activities WHERE app_id = \(activities.app) AND channel_id = c.channel_id)
            """
        let ids = parameters.bind(channelIDs)
        // Not a prepared statement: a generic plan for `= ANY(ids)` can scan every channel of the app.
        let rows = try await client.query(
            parameters.query(
                """
                SELECT \(Column.selectList) FROM channels c
                CROSS JOIN LATERAL (
                    SELECT coalesce(json_agg(f.activity ORDER BY f.name), '[]')::text AS json
                    FROM (\(activities.select(from: keys))) f) activity_list
                WHERE c.app_id = \(activities.app) AND c.channel_id = ANY(\(ids)::uuid[])
                """),
            logger: self.logger
        ).collect()
        var records: [UUID: ChannelRecord] = [:]
        for row in rows {
            let record = try self.record(NamedRow(row))
            records[record.channelID] = record
        }
        return channelIDs.compactMap { records[$0] }
    }

    private func record(_ row: NamedRow<Column>) throws(UnreadableColumn) -> ChannelRecord {
        var tagGroups: [String: [String]] = [:]
        for pair in try Self.decode([[String]].self, row, .tags) where pair.count == 2 {
            tagGroups[pair[0], default: []].append(pair[1])
        }
        let quietTime: String? = try row.decode(.quietTime)
        let startTokens = try Self.decode([String: StartTokenRow].self, row, .startTokens)
        return ChannelRecord(
            channelID: try row.decode(.channelID),
            installed: try row.decode(.installed),
            optIn: try row.decode(.optIn),
            background: try row.decode(.background),
            pushAddress: try row.decode(.pushAddress),
            created: try row.decode(.createdAt),
            lastRegistration: try row.decode(.lastRegistration),
            namedUserID: try row.decode(.namedUserID),
            alias: try row.decode(.alias),
            tagGroups: tagGroups,
            badge: try row.decode(.badge, as: Int?.self),
            quietTime: try quietTime.map { text throws(UnreadableColumn) in
                try Self.decode(ChannelRegistration.QuietTime.self, text, .quietTime)
            },
            timezone: try row.decode(.timezone),
            frequentPushesEnabled: try row.decode(.frequentPushes),
            attributes: try Self.decode([String: JSONValue].self, row, .attributes),
            liveActivities: try Self.decode([LiveActivityRecords.Row].self, row, .activities).compactMap { $0.record(now: self.now) },
            pushToStartTokens: startTokens.mapValues(\.token),
            pushToStartTokensUpdated: startTokens.mapValues { Date(timeIntervalSince1970: $0.updatedAt) }
        )
    }

    /// The column's JSON text decoded as `T`.
    private static func decode<T: Decodable>(_ type: T.Type, _ row: NamedRow<Column>, _ column: Column) throws(UnreadableColumn) -> T {
        try Self.decode(T.self, try row.decode(column, as: String.self), column)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ json: String, _ column: Column) throws(UnreadableColumn) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(json.utf8))
        } catch {
            throw UnreadableColumn(column.rawValue, "not the JSON expected: \(error)")
        }
    }

    /// A push-to-start token as the query aggregates it, its time in seconds since 1970.
    private struct StartTokenRow: Decodable {
        var token: String
        var updatedAt: Double

        enum CodingKeys: String, CodingKey {
            case token
            case updatedAt = "updated_at"
        }
    }
}
