import BlimpCore
import BlimpStore

/// What the Push API requires of a push whose Live Activity name is backed by a live activity channel (reference:
/// apns-live-activities.md §3.5–3.7): an update or end is published once to every subscriber, so its audience is
/// `all` and its payload at most ``APNsBroadcastRequest/maxPayloadBytes``; a name whose channel APNs deleted is
/// refused until an admin acknowledges it (it would reach no subscriber).
enum BroadcastRules {
    /// The live channel id of every name in `pushes` that has one, each push checked against it; `paths[i]` is where
    /// push `i` sits in the request body (`""` or `"[i]."`).
    static func channels(
        for pushes: [Push], paths: [String], channels newest: [String: LiveActivityChannel]
    ) throws -> [String: String] {
        var live: [String: String] = [:]
        for (push, path) in zip(pushes, paths) {
            guard case .liveActivity(let activity) = push.content, let channel = newest[activity.name] else { continue }
            if channel.blocksItsName {
                throw AirshipError(
                    .conflict, "APNs deleted the live activity channel of this Live Activity name.",
                    details: .init(
                        error: """
                            APNs no longer knows the live activity channel \(channel.apnsChannelID) of '\(activity.name)': a publish was \
                            answered ChannelNotRegistered or BadChannelId, so the activities subscribed to it can no longer be reached. \
                            Create a new channel (POST /api/live_activity_channels) and start the activities again, or acknowledge the \
                            deletion (DELETE /api/live_activity_channels/{name}) to push to update tokens only
                            """,
                        path: path + "notification.ios.live_activity.name"))
            }
            guard channel.isLive else { continue }
            live[activity.name] = channel.apnsChannelID
            if activity.event != .start, push.audience != .all {
                throw AirshipError(
                    .badRequest, "Could not parse request body.",
                    details: .init(
                        error: """
                            '\(activity.name)' is backed by a live activity channel: an \(activity.event.rawValue) is published once to the \
                            channel and reaches every subscribed device whatever the audience, so the audience must be "all"
                            """,
                        path: path + "audience"))
            }
        }
        return live
    }
}
