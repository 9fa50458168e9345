/// What a push of a Live Activity name backed by a live activity channel must be, wherever pushes are accepted
/// (``PushPreparation``): an update or end is published once to every subscriber, so its audience is `all`
/// and its payload at most ``APNsBroadcastRequest/maxPayloadBytes``; a name whose channel APNs deleted is refused until
/// an admin acknowledges it, since it would reach no subscriber (docs/references.md#broadcast-channels).
public enum BroadcastRules {
    /// How a push goes with respect to its name's live activity channel.
    public struct Route: Sendable, Equatable {
        /// The `apns-channel-id` of the live channel backing the push's name, if it has one: a start subscribes its
        /// activities to it, an update or end is published to it.
        public var channelID: String?
        /// An update or end published to that channel (its payload limit is the channel's).
        public var isPublished: Bool
    }

    /// The route of `push`, at `path` in the request body (`""` or `"[i]."`), given each name's newest channel
    /// (`newest`), or why the rules refuse it.
    public static func route(of push: Push, at path: String, newest: [String: LiveActivityChannel]) throws(PushRefusal) -> Route {
        guard case .liveActivity(let activity) = push.content, let channel = newest[activity.name] else { return Route(channelID: nil, isPublished: false) }
        if channel.blocksItsName {
            throw PushRefusal(
                InvalidField(
                    path + "notification.ios.live_activity.name",
                    """
                    APNs no longer knows the live activity channel \(channel.apnsChannelID) of '\(activity.name)': a publish was \
                    answered ChannelNotRegistered or BadChannelId, so the activities subscribed to it can no longer be reached. \
                    Create a new channel (POST /api/live_activity_channels) and start the activities again, or acknowledge the \
                    deletion (DELETE /api/live_activity_channels/{name}) to push to update tokens only
                    """),
                isChannelGone: true)
        }
        guard channel.isLive else { return Route(channelID: nil, isPublished: false) }
        let published = activity.event != .start
        if published, push.audience != .all {
            throw PushRefusal(
                InvalidField(
                    path + "audience",
                    """
                    '\(activity.name)' is backed by a live activity channel: an \(activity.event.rawValue) is published once to \
                    the channel and reaches every subscribed device whatever the audience, so the audience must be "all"
                    """))
        }
        return Route(channelID: channel.apnsChannelID, isPublished: published)
    }
}
