import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Reads whole ``ChannelRecord``s for a set of channels: four set-based queries, however many channels.
struct ChannelRecords {
    let appID: Int64
    let now: Date
    let logger: Logger

    /// The app's channels among `channelIDs`, in that order.
    func fetch(_ channelIDs: [UUID], on connection: PostgresConnection) async throws -> [ChannelRecord] {
        let ids = channelIDs.map(\.lowercased)
        var records: [String: ChannelRecord] = [:]
        let rows = try await connection.query(
            """
            SELECT channel_id::text, installed, opt_in, background, push_address, created_at, last_registration,
                   named_user_id, alias, badge, quiet_time::text, timezone, frequent_pushes_enabled, attributes::text
            FROM channels WHERE app_id = \(self.appID) AND channel_id = ANY(\(ids)::uuid[])
            """,
            logger: self.logger
        )
        let decoder = JSONDecoder()
        for try await row in rows.decode(
            (String, Bool, Bool, Bool, String?, Date, Date, String?, String?, Int?, String?, String?, Bool, String).self
        ) {
            let (id, installed, optIn, background, pushAddress, created, lastRegistration, namedUser, alias, badge,
                 quietTime, timezone, frequentPushes, attributes) = row
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
                tagGroups: [:],
                badge: badge,
                quietTime: quietTime.flatMap { try? decoder.decode(ChannelRegistration.QuietTime.self, from: Data($0.utf8)) },
                timezone: timezone,
                frequentPushesEnabled: frequentPushes,
                attributes: (try? decoder.decode([String: JSONValue].self, from: Data(attributes.utf8))) ?? [:],
                liveActivities: [],
                pushToStartTokens: [:]
            )
        }
        guard !records.isEmpty else { return [] }
        for (id, groups) in try await TagWriter.channels.tags(appID: self.appID, owners: ids, on: connection, logger: self.logger) {
            records[id]?.tagGroups = groups
        }
        try await self.addActivities(to: &records, ids: ids, on: connection)
        let tokens = try await connection.query(
            """
            SELECT channel_id::text, attributes_type, token FROM push_to_start_tokens
            WHERE app_id = \(self.appID) AND channel_id = ANY(\(ids)::uuid[]) AND token IS NOT NULL
            """,
            logger: self.logger
        )
        for try await (id, attributesType, token) in tokens.decode((String, String, String).self) {
            records[id]?.pushToStartTokens[attributesType] = token
        }
        return ids.compactMap { records[$0] }
    }

    /// The tracked activities that are still on the device: not removed, within 12 hours of their start and not past
    /// their dismissal date. Those 8 hours past their start show as ended.
    private func addActivities(
        to records: inout [String: ChannelRecord],
        ids: [String],
        on connection: PostgresConnection
    ) async throws {
        let rows = try await connection.query(
            """
            SELECT channel_id::text, name, activity_id, token, state, started_at, updated_at FROM live_activities
            WHERE app_id = \(self.appID) AND channel_id = ANY(\(ids)::uuid[]) AND state <> 'removed'
              AND started_at >= \(self.now.addingTimeInterval(-LiveActivityLifetime.kept))
              AND (dismiss_at IS NULL OR dismiss_at >= \(self.now))
            ORDER BY name
            """,
            logger: self.logger
        )
        for try await (id, name, activityID, token, state, startedAt, updatedAt) in rows.decode(
            (String, String, String, String, String, Date, Date).self
        ) {
            let ended = state == "ended" || !LiveActivityLifetime.isUpdatable(startedAt: startedAt, now: self.now)
            records[id]?.liveActivities.append(
                TrackedLiveActivity(
                    name: name, id: activityID, token: token, startedAt: startedAt, updatedAt: updatedAt,
                    state: ended ? "ended" : "active"
                )
            )
        }
    }
}
