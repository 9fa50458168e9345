import BlimpCore
import Foundation
import PostgresNIO

/// The one statement each ``LiveActivityUpdate`` but a `set` of an update token becomes (those go through
/// ``RegistrationWriter``). Each is last-writer-wins by the device's `action_ts_ms`: the row changes only when the
/// entry is at least as new as what the row holds.
///
/// A removal leaves a row behind (token NULL, state `removed`) so that an older `set` arriving later cannot bring the
/// activity back; the row goes with the activity's lifetime like any other.
enum LiveActivityStatements {
    static func apply(_ update: LiveActivityUpdate, channelID: UUID, appID: Int64, now: Date) -> PostgresQuery {
        switch update {
        case .setActivity:
            preconditionFailure("update tokens are set by RegistrationWriter, coalesced")
        case .removeActivity(let name, let activityID, let startedAt, let actionMilliseconds):
            // Removing another activity than the one tracked under the name changes nothing.
            return """
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
        case .setStartToken(let attributesType, let token, let actionMilliseconds):
            return Self.startToken(token, attributesType: attributesType, actionMilliseconds: actionMilliseconds,
                                   channelID: channelID, appID: appID, now: now)
        case .removeStartToken(let attributesType, let actionMilliseconds):
            return Self.startToken(nil, attributesType: attributesType, actionMilliseconds: actionMilliseconds,
                                   channelID: channelID, appID: appID, now: now)
        }
    }

    /// Sets (or, with a `nil` token, removes) the push-to-start token of a type.
    private static func startToken(
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
