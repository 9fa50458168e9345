import BlimpCore
import Foundation
import PostgresNIO

/// An app at a glance, as the console's overview shows it.
public struct AppOverview: Sendable {
    public var rollup: AppRollup
    /// The names with the most active Live Activities, most first.
    public var activeByName: [(name: String, active: Int)]
    /// Pushes accepted in the last 24 hours, by state.
    public var pushesByState: [PushState: Int]
    /// Pushes waiting for a worker, and when the oldest of them was accepted.
    public var queued: Int
    public var oldestQueuedAt: Date?
    /// APNs sends per minute over the last hour, by status (0: no answer).
    public var sendsByMinute: [SendTally]
}

/// How many sends of one minute got one APNs status.
public struct SendTally: Sendable, Equatable {
    public var minute: Date
    public var status: Int
    public var sends: Int
}

extension ConsoleStore {
    /// How many names the overview lists.
    public static let overviewNames = 10

    /// The app's overview at `now`.
    public func overview(appID: Int64, now: Date) async throws(StoreError) -> AppOverview {
        let rollup = try await self.rollup(appID: appID, now: now)
        return try await StoreError.mapping {
            var names: [(String, Int)] = []
            let namesQuery: PostgresQuery = """
                SELECT name, active::int FROM activity_name_rollups WHERE app_id = \(appID) AND active > 0
                ORDER BY active DESC, name LIMIT \(Self.overviewNames)
                """
            for try await row in try await self.client.query(namesQuery, logger: self.logger).decode((String, Int).self) { names.append(row) }

            var states: [PushState: Int] = [:]
            let statesQuery: PostgresQuery = """
                SELECT state, count(*)::int FROM pushes WHERE app_id = \(appID) AND accepted_at > \(now.addingTimeInterval(-86400))
                GROUP BY state
                """
            for try await (state, count) in try await self.client.query(statesQuery, logger: self.logger).decode((String, Int).self) {
                if let state = PushState(rawValue: state) { states[state] = count }
            }

            var queued = 0
            var oldest: Date?
            let queueQuery: PostgresQuery = "SELECT count(*)::int, min(accepted_at) FROM pushes WHERE app_id = \(appID) AND state = 'queued'"
            for try await (count, at) in try await self.client.query(queueQuery, logger: self.logger).decode((Int, Date?).self) {
                (queued, oldest) = (count, at)
            }

            var tallies: [SendTally] = []
            let talliesQuery: PostgresQuery = """
                SELECT minute, status::int, sum(sends)::int FROM send_tallies
                WHERE app_id = \(appID) AND minute > \(now.addingTimeInterval(-3600))
                GROUP BY minute, status ORDER BY minute, status
                """
            for try await (minute, status, sends) in try await self.client.query(talliesQuery, logger: self.logger).decode((Date, Int, Int).self) {
                tallies.append(SendTally(minute: minute, status: status, sends: sends))
            }
            return AppOverview(
                rollup: rollup, activeByName: names, pushesByState: states, queued: queued, oldestQueuedAt: oldest,
                sendsByMinute: tallies)
        }
    }
}
