import BlimpCore
import Foundation

extension ChannelStore {
    /// The janitor's chore: reports the Live Activity states that come from time alone once their time passed
    /// (`due_at`): an active activity's 8 hours ran out (`LIVE_ACTIVITY_EXPIRED`: iOS ended it), an ended one's dismissal
    /// date came (`LIVE_ACTIVITY_DISMISSED`), each occurring at its due time. App by app in batches of `batchSize`
    /// (``BatchedDelete``) until none is due or `budget` is spent; each activity once. Returns how many were reported.
    /// It runs before ``deleteExpiredActivities(budget:batchSize:)``, whose 12 hours come after every due time.
    public func reportTimedActivityStates(budget: Duration, batchSize: Int = BatchedDelete.size) async throws(StoreError) -> Int {
        let now = self.now()
        let apps = try await BatchedDelete.appIDs(self.client, logger: self.logger)
        return try await BatchedDelete.run(over: apps, size: batchSize, budget: budget) { appID, limit in
            try await BatchedDelete.count(
                """
                WITH due AS (
                    SELECT app_id, channel_id, name, due_at FROM live_activities
                    WHERE app_id = \(appID) AND due_at <= \(now)
                    ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED),
                passed AS (
                    UPDATE live_activities la SET due_at = NULL
                    FROM due WHERE la.app_id = due.app_id AND la.channel_id = due.channel_id AND la.name = due.name
                    RETURNING la.app_id, la.channel_id, la.name, la.activity_id, la.state, due.due_at AS occurred_at, NULL::uuid AS push_id),
                reported AS (
                    \(unescaped: EventLog.activityEvents(
                        typeExpression: """
                            CASE WHEN state = 'active' THEN '\(EventType.liveActivityExpired.rawValue)'
                                 ELSE '\(EventType.liveActivityDismissed.rawValue)' END
                            """,
                        from: "passed"))
                    RETURNING 1)
                SELECT count(*)::int FROM reported
                """,
                on: self.client, logger: self.logger)
        }
    }
}
