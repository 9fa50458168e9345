import BlimpCore
import Foundation
import PostgresNIO

/// One channel's activity under a name, as the listing by name shows it.
public struct ChannelActivity: Sendable, Equatable, Encodable {
    public var channelID: UUID
    public var activity: LiveActivityRecord

    public init(channelID: UUID, activity: LiveActivityRecord) {
        self.channelID = channelID
        self.activity = activity
    }

    enum CodingKeys: String, CodingKey {
        case channelID = "channel_id"
        case activity = "live_activity"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.channelID.lowercaseString, forKey: .channelID)
        try container.encode(self.activity, forKey: .activity)
    }
}

/// A page of a name's activities in channel-id order, and where the next begins.
public struct ChannelActivityPage: Sendable, Equatable {
    public var activities: [ChannelActivity]
    /// The first channel id of the next page; `nil` on the last.
    public var next: UUID?
}

extension ChannelStore {
    /// The activities tracked or awaiting under `name` on up to `limit` channels in channel-id order, from `start`
    /// (inclusive) on. The page is a range of each index that holds the name's activities by state (the tracked ones
    /// `active`, `ended` and `removed`, the awaiting ones `awaiting` and `expired`), however many the name has.
    public func liveActivities(
        named name: String, appID: Int64, start: UUID?, limit: Int
    ) async throws(StoreError) -> ChannelActivityPage {
        let now = self.now()
        var pageParameters = QueryParameters()
        let (pageApp, pageName) = (pageParameters.bind(appID), pageParameters.bind(name))
        let (from, pageLimit) = (pageParameters.bind(start ?? ChannelIDRange.all.after), pageParameters.bind(limit + 1))
        let ids = """
            SELECT channel_id FROM (\(Self.channelIDs(named: pageName, app: pageApp, from: from, limit: pageLimit))) ids
            ORDER BY channel_id LIMIT \(pageLimit)
            """
        return try await StoreError.mapping { [pageParameters] in
            var page = try await self.client.query(pageParameters.query(ids), logger: self.logger).decode(UUID.self).array()
            // The page reads one id more than it shows: that id starts the next page.
            let next = page.count > limit ? page.removeLast() : nil
            var parameters = QueryParameters()
            let records = LiveActivityRecords(appID: appID, now: now, binding: &parameters)
            let (activityName, channelIDs) = (parameters.bind(name), parameters.bind(page))
            let keys = "(SELECT channel_id, \(activityName)::text AS name FROM unnest(\(channelIDs)::uuid[]) AS channel_id)"
            let sql = "SELECT f.channel_id, f.activity::text FROM (\(records.select(from: keys))) f ORDER BY f.channel_id"
            let rows = try await self.client.query(parameters.query(sql), logger: self.logger)
            var activities: [ChannelActivity] = []
            for try await (channelID, json) in rows.decode((UUID, String).self) {
                if let activity = try Self.activity(json, now: now) { activities.append(ChannelActivity(channelID: channelID, activity: activity)) }
            }
            return ChannelActivityPage(activities: activities, next: next)
        }
    }

    /// How many of `name`'s activities are in each state now (every state present, zeros included). Reads every
    /// activity of the name, with only what its state needs (``LiveActivityRecords/Detail/stateOnly``).
    public func liveActivityCounts(named name: String, appID: Int64) async throws(StoreError) -> [LiveActivityState: Int] {
        let now = self.now()
        var parameters = QueryParameters()
        let records = LiveActivityRecords(appID: appID, now: now, binding: &parameters)
        let activityName = parameters.bind(name)
        let channelIDs = Self.channelIDs(named: activityName, app: records.app, from: nil, limit: nil)
        let keys = "(SELECT channel_id, \(activityName)::text AS name FROM (\(channelIDs)) ids)"
        let sql = "SELECT f.activity::text FROM (\(records.select(from: keys, .stateOnly(name: activityName)))) f"
        return try await StoreError.mapping { [parameters] in
            var counts = Dictionary(uniqueKeysWithValues: LiveActivityState.allCases.map { ($0, 0) })
            let rows = try await self.client.query(parameters.query(sql), logger: self.logger)
            for try await json in rows.decode(String.self) {
                if let activity = try Self.activity(json, now: now) { counts[activity.state, default: 0] += 1 }
            }
            return counts
        }
    }

    /// The channel ids with an activity of the name (placeholder `name`) in the app (`app`), from `from` on, each branch
    /// a range of one partial index (at most `limit` ids from each): UNION removes a channel that both tracks and
    /// awaits the name.
    private static func channelIDs(named name: String, app: String, from: String?, limit: String?) -> String {
        let range = from.map { " AND channel_id >= \($0)" } ?? ""
        let limit = limit.map { " ORDER BY channel_id LIMIT \($0)" } ?? ""
        let tracked = ["active", "ended", "removed"].map {
            "(SELECT channel_id FROM live_activities WHERE app_id = \(app) AND name = \(name) AND state = '\($0)'\(range)\(limit))"
        }
        let awaiting = ["awaiting", "expired"].map {
            "(SELECT channel_id FROM awaiting_activities WHERE app_id = \(app) AND name = \(name) AND state = '\($0)'\(range)\(limit))"
        }
        return (tracked + awaiting).joined(separator: " UNION ")
    }

    private static func activity(_ json: String, now: Date) throws -> LiveActivityRecord? {
        do {
            return try JSONDecoder().decode(LiveActivityRecords.Row.self, from: Data(json.utf8)).record(now: now)
        } catch {
            throw UnreadableColumn("activity", "not the JSON expected: \(error)")
        }
    }
}
