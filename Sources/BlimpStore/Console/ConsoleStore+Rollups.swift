import BlimpCore
import Foundation
import PostgresNIO

/// Counts that would read every channel or activity of an app on each page view, kept in rollup tables instead.
public struct AppRollup: Sendable, Equatable {
    public var channels: Int
    public var optedIn: Int
    public var computedAt: Date
}

extension ConsoleStore {
    /// Recounts every app's channels and every Live Activity name's activities (a ``Janitor`` chore, once a minute);
    /// returns how many names were counted. Runs in one transaction, so the console never sees half a refresh.
    public func refreshRollups(now: Date) async throws(StoreError) -> Int {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO app_rollups (app_id, channels, opted_in, computed_at)
                    SELECT a.id, count(c.channel_id), count(c.channel_id) FILTER (WHERE c.opt_in), \(now)
                    FROM apps a LEFT JOIN channels c ON c.app_id = a.id
                    GROUP BY a.id
                    ON CONFLICT (app_id) DO UPDATE
                    SET channels = excluded.channels, opted_in = excluded.opted_in, computed_at = excluded.computed_at
                    """,
                    logger: self.logger)
                try await connection.query("DELETE FROM activity_name_rollups", logger: self.logger)
                return try await connection.query(
                    Self.countNames(appID: nil, now: now), logger: self.logger
                ).decode(Int.self).array().first ?? 0
            }
        }
    }

    /// The app's channel counts, counted now when no rollup has them yet (a new app, or a new deployment).
    public func rollup(appID: Int64, now: Date) async throws(StoreError) -> AppRollup {
        try await StoreError.mapping {
            let read: PostgresQuery = "SELECT channels, opted_in, computed_at FROM app_rollups WHERE app_id = \(appID)"
            for try await (channels, optedIn, at) in try await self.client.query(read, logger: self.logger).decode((Int, Int, Date).self) {
                return AppRollup(channels: channels, optedIn: optedIn, computedAt: at)
            }
            try await self.client.withTransaction(logger: self.logger) { connection in
                try await connection.query(
                    """
                    INSERT INTO app_rollups (app_id, channels, opted_in, computed_at)
                    SELECT \(appID), count(*), count(*) FILTER (WHERE opt_in), \(now) FROM channels WHERE app_id = \(appID)
                    ON CONFLICT (app_id) DO NOTHING
                    """,
                    logger: self.logger)
                try await connection.query("DELETE FROM activity_name_rollups WHERE app_id = \(appID)", logger: self.logger)
                try await connection.query(Self.countNames(appID: appID, now: now), logger: self.logger)
            }
            for try await (channels, optedIn, at) in try await self.client.query(read, logger: self.logger).decode((Int, Int, Date).self) {
                return AppRollup(channels: channels, optedIn: optedIn, computedAt: at)
            }
            return AppRollup(channels: 0, optedIn: 0, computedAt: now)
        }
    }

    /// Counts activities by name (of one app, or all), into `activity_name_rollups`; selects how many names.
    private static func countNames(appID: Int64?, now: Date) -> PostgresQuery {
        let updatable = now.addingTimeInterval(-LiveActivityLifetime.updatable)
        return """
            WITH counted AS (
                INSERT INTO activity_name_rollups (app_id, name, active, ended, expired, computed_at)
                SELECT app_id, name,
                       count(*) FILTER (WHERE state = 'active' AND started_at > \(updatable)),
                       -- Ended and not yet dismissed: the janitor keeps dismissed activities until their 12 hours.
                       count(*) FILTER (WHERE state = 'ended' AND (dismiss_at IS NULL OR dismiss_at >= \(now))),
                       count(*) FILTER (WHERE state = 'active' AND started_at <= \(updatable)),
                       \(now)
                FROM live_activities
                WHERE state IN ('active', 'ended') AND (\(appID)::bigint IS NULL OR app_id = \(appID))
                GROUP BY app_id, name
                -- A new app's first count and the janitor's pass may meet: the later one wins.
                ON CONFLICT (app_id, name) DO UPDATE
                SET active = excluded.active, ended = excluded.ended, expired = excluded.expired, computed_at = excluded.computed_at
                RETURNING 1)
            SELECT count(*)::int FROM counted
            """
    }
}
