/// What a push of a Live Activity name backed by a live activity channel must be, wherever pushes are accepted (the
/// Push API, the console's compose): an update or end is published once to every subscriber, so its audience is `all`
/// and its payload at most ``APNsBroadcastRequest/maxPayloadBytes``; a name whose channel APNs deleted is refused until
/// an admin acknowledges it, since it would reach no subscriber (docs/references.md#broadcast-channels).
public enum BroadcastRules {
    /// A push the rules refuse: the field and why.
    public struct Refusal: Error, Sendable {
        public var field: InvalidField
        /// APNs no longer knows the name's channel: a conflict with the name's state (409), not bad input (400).
        public var isChannelGone: Bool
    }

    /// The live channel id of every name in `pushes` that has one, each push checked against it and its payload's
    /// size against its limit; `paths[i]` is where push `i` sits in the request body (`""` or `"[i]."`), `newest` each
    /// name's newest channel, and `timestamp` a placeholder for pushes that name none.
    public static func channels(
        for pushes: [Push], paths: [String], newest: [String: LiveActivityChannel], timestamp: Int64
    ) throws(Refusal) -> [String: String] {
        var live: [String: String] = [:]
        for (push, path) in zip(pushes, paths) {
            var channelID: String?
            var published = false
            if case .liveActivity(let activity) = push.content, let channel = newest[activity.name] {
                if channel.blocksItsName {
                    throw Refusal(
                        field: InvalidField(
                            path + "notification.ios.live_activity.name",
                            """
                            APNs no longer knows the live activity channel \(channel.apnsChannelID) of '\(activity.name)': a publish was \
                            answered ChannelNotRegistered or BadChannelId, so the activities subscribed to it can no longer be reached. \
                            Create a new channel (POST /api/live_activity_channels) and start the activities again, or acknowledge the \
                            deletion (DELETE /api/live_activity_channels/{name}) to push to update tokens only
                            """),
                        isChannelGone: true)
                }
                if channel.isLive {
                    live[activity.name] = channel.apnsChannelID
                    channelID = channel.apnsChannelID
                    published = activity.event != .start
                    if published, push.audience != .all {
                        throw Refusal(
                            field: InvalidField(
                                path + "audience",
                                """
                                '\(activity.name)' is backed by a live activity channel: an \(activity.event.rawValue) is published once to \
                                the channel and reaches every subscribed device whatever the audience, so the audience must be "all"
                                """),
                            isChannelGone: false)
                    }
                }
            }
            let stamp: Int64? = if case .liveActivity(let activity) = push.content { activity.timestamp } else { nil }
            do {
                try APNsPayload(push, timestamp: stamp ?? timestamp, broadcastChannelID: channelID)
                    .checkSize(at: path + "notification", broadcast: published)
            } catch {
                throw Refusal(field: error, isChannelGone: false)
            }
        }
        return live
    }

    /// The Live Activity names of `pushes`, each once: what to look the channels up by.
    public static func names(in pushes: [Push]) -> [String] {
        Array(Set(pushes.compactMap { push -> String? in if case .liveActivity(let activity) = push.content { activity.name } else { nil } }))
    }
}
