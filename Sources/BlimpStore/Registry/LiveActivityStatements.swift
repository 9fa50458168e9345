import BlimpCore
import Foundation
import PostgresNIO

/// The statements for the batch entries ``RegistrationWriter`` does not coalesce: removing an activity, and setting
/// or removing a push-to-start token. Each is last-writer-wins by the device's `action_ts_ms`: the row changes only
/// when the entry is at least as new as what the row holds.
enum LiveActivityStatements {
    /// Removes the activity `activityID` tracked under `name`. The row stays (token NULL, state `removed`) so that an
    /// older `set` arriving later cannot bring the activity back; it goes with the activity's lifetime like any other.
    /// Removing another activity than the one tracked under the name changes nothing.
    static func removeActivity(
        name: String,
        activityID: String,
        startedAt: Date,
        actionMilliseconds: Int64,
        channelID: UUID,
        appID: Int64,
        now: Date
    ) -> PostgresQuery {
        """
        INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at,
                                     action_ts_ms, updated_at)
        VALUES (\(appID), \(channelID), \(name), \(activityID), NULL, 'removed', \(startedAt),
                \(actionMilliseconds), \(now))
        ON CONFLICT (app_id, channel_id, name) DO UPDATE SET
            token = NULL,
            state = 'removed',
            action_ts_ms = EXCLUDED.action_ts_ms,
            updated_at = EXCLUDED.updated_at
        WHERE live_activities.action_ts_ms <= EXCLUDED.action_ts_ms
          AND live_activities.activity_id = EXCLUDED.activity_id
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
