extension APNsReason {
    /// What APNs answers for a broadcast channel it does not know: its id unknown or malformed (see
    /// https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns). A publish answered so means the channel is gone.
    public static let unknownChannel: Set<APNsReason> = [.channelNotRegistered, .badChannelId]
}
