import BlimpCore
import Foundation
import PostgresNIO

/// The statements for the batch entries ``RegistrationWriter`` does not coalesce: removing an activity, and setting
/// or removing a push-to-start token. Each is last-writer-wins by the device's `action_ts_ms`: the row changes only
/// when the entry is at least as new as what the row holds.
enum LiveActivityStatements {
    /// Removes the activity `activityID` tracked under `name`. The row stays (token NULL, state `removed`) so that an
    /// older `set` arriving later cannot bring the activity back; it goes with the activity's lifetime like any other.
    /// Removing another activity than the one tracked under the name changes nothing. Removing an active one is its
    /// end on the device: a `LIVE_ACTIVITY_ENDED` event, and its dismissal due when iOS dismisses it at the latest.
    static func removeActivity(
        name: String,
        activityID: String,
        startedAt: Date,
        actionMilliseconds: Int64,
        channelID: UUID,
        appID: Int64,
        now: Date
    ) -> PostgresQuery {
        let dismissal = now.addingTimeInterval(LiveActivityLifetime.dismissedAfterEnd)
        return """
            WITH was_active AS (
                SELECT 1 FROM live_activities
                WHERE app_id = \(appID) AND channel_id = \(channelID) AND name = \(name) AND activity_id = \(activityID) AND state = 'active'),
            removed AS (
                INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at,
                                             action_ts_ms, updated_at)
                VALUES (\(appID), \(channelID), \(name), \(activityID), NULL, 'removed', \(startedAt),
                        \(actionMilliseconds), \(now))
                ON CONFLICT (app_id, channel_id, name) DO UPDATE SET
                    token = NULL,
                    state = 'removed',
                    due_at = CASE WHEN live_activities.state = 'active' THEN \(dismissal) ELSE live_activities.due_at END,
                    action_ts_ms = EXCLUDED.action_ts_ms,
                    updated_at = EXCLUDED.updated_at
                WHERE live_activities.action_ts_ms <= EXCLUDED.action_ts_ms
                  AND live_activities.activity_id = EXCLUDED.activity_id
                RETURNING app_id, channel_id, name, activity_id, updated_at AS occurred_at, NULL::uuid AS push_id),
            ended AS (SELECT * FROM removed WHERE EXISTS (SELECT 1 FROM was_active))
            \(unescaped: EventLog.activityEvents(
                .liveActivityEnded, from: "ended", details: ", 'ended_by', 'device', 'dismissal_date', '\(StreamedEvent.format(dismissal))'"))
            """
    }

    /// Sets (or, with a `nil` token, removes) the push-to-start token of a type.
    static func startToken(
        _ token: String?,
        attributesType: String,
        actionMilliseconds: Int64,
        channelID: UUID,
        appID: Int64,
        now: Date
    ) -> PostgresQuery {
        """
        INSERT INTO push_to_start_tokens (app_id, channel_id, attributes_type, token, action_ts_ms, updated_at)
        VALUES (\(appID), \(channelID), \(attributesType), \(token), \(actionMilliseconds), \(now))
        ON CONFLICT (app_id, channel_id, attributes_type) DO UPDATE SET
            token = EXCLUDED.token,
            action_ts_ms = EXCLUDED.action_ts_ms,
            updated_at = EXCLUDED.updated_at
        WHERE push_to_start_tokens.action_ts_ms <= EXCLUDED.action_ts_ms
        """
    }
}
