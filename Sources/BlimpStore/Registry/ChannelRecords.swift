import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Reads whole ``ChannelRecord``s for a set of channels in one query: each channel's tags, activities and
/// push-to-start tokens come along as JSON.
struct ChannelRecords {
    let appID: Int64
    let now: Date
    let logger: Logger

    /// The app's channels among `channelIDs`, in that order. Activities show while still on the device: not
    /// removed, within 12 hours of their start and not past their dismissal date; those 8 hours past their start
    /// show as ended.
    func fetch(_ channelIDs: [UUID], client: PostgresClient) async throws -> [ChannelRecord] {
        let ids = channelIDs.map(\.lowercased)
        // Not a prepared statement: a generic plan for `= ANY($2)` can scan every channel of the app.
        let rows = try await client.query(
            """
            SELECT c.channel_id::text, c.installed, c.opt_in, c.background, c.push_address, c.created_at,
                   c.last_registration, c.named_user_id, c.alias, c.badge, c.quiet_time::text, c.timezone,
                   c.frequent_pushes_enabled, c.attributes::text,
                   (SELECT coalesce(json_agg(json_build_array(t.tag_group, t.tag) ORDER BY t.tag_group, t.tag), '[]')
                    FROM channel_tags t WHERE t.app_id = c.app_id AND t.channel_id = c.channel_id)::text,
                   (SELECT coalesce(json_agg(json_build_object(
                               'name', a.name, 'id', a.activity_id, 'token', a.token, 'state', a.state,
                               'started_at', extract(epoch FROM a.started_at),
                               'updated_at', extract(epoch FROM a.updated_at)) ORDER BY a.name), '[]')
                    FROM live_activities a
                    WHERE a.app_id = c.app_id AND a.channel_id = c.channel_id AND a.state <> 'removed'
                      AND a.started_at >= \(self.now.addingTimeInterval(-LiveActivityLifetime.kept))
                      AND (a.dismiss_at IS NULL OR a.dismiss_at >= \(self.now)))::text,
                   (SELECT coalesce(json_object_agg(p.attributes_type, p.token), '{}')
                    FROM push_to_start_tokens p
                    WHERE p.app_id = c.app_id AND p.channel_id = c.channel_id AND p.token IS NOT NULL)::text
            FROM channels c WHERE c.app_id = \(self.appID) AND c.channel_id = ANY(\(ids)::uuid[])
            """,
            logger: self.logger
        )
        var records: [String: ChannelRecord] = [:]
        for try await row in rows.decode(
            (String, Bool, Bool, Bool, String?, Date, Date, String?, String?, Int?, String?, String?, Bool, String,
             String, String, String).self
        ) {
            let (id, installed, optIn, background, pushAddress, created, lastRegistration, namedUser, alias, badge,
                 quietTime, timezone, frequentPushes, attributes, tags, activities, startTokens) = row
            var tagGroups: [String: [String]] = [:]
            for pair in try Self.decode([[String]].self, tags) where pair.count == 2 {
                tagGroups[pair[0], default: []].append(pair[1])
            }
            records[id] = ChannelRecord(
                channelID: UUID(uuidString: id)!,
                installed: installed,
                optIn: optIn,
                background: background,
                pushAddress: pushAddress,
                created: created,
                lastRegistration: lastRegistration,
                namedUserID: namedUser,
                alias: alias,
                tagGroups: tagGroups,
                badge: badge,
                quietTime: try quietTime.map { try Self.decode(ChannelRegistration.QuietTime.self, $0) },
                timezone: timezone,
                frequentPushesEnabled: frequentPushes,
                attributes: try Self.decode([String: JSONValue].self, attributes),
                liveActivities: try Self.decode([ActivityRow].self, activities).map { $0.activity(now: self.now) },
                pushToStartTokens: try Self.decode([String: String].self, startTokens)
            )
        }
        return ids.compactMap { records[$0] }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    /// An activity as the query aggregates it, times in seconds since 1970.
    private struct ActivityRow: Decodable {
        var name: String
        var id: String
        var token: String
        var state: String
        var startedAt: Double
        var updatedAt: Double

        enum CodingKeys: String, CodingKey {
            case name, id, token, state
            case startedAt = "started_at"
            case updatedAt = "updated_at"
        }

        func activity(now: Date) -> TrackedLiveActivity {
            let startedAt = Date(timeIntervalSince1970: self.startedAt)
            let ended = self.state == "ended" || !LiveActivityLifetime.isUpdatable(startedAt: startedAt, now: now)
            return TrackedLiveActivity(
                name: self.name, id: self.id, token: self.token, startedAt: startedAt,
                updatedAt: Date(timeIntervalSince1970: self.updatedAt), state: ended ? "ended" : "active"
            )
        }
    }
}
