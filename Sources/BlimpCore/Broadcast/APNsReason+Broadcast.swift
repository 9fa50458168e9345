extension APNsReason {
    /// What APNs answers for a broadcast channel it does not know: its id unknown or malformed (reference:
    /// apns-live-activities.md §1.6). A publish answered so means the channel is gone.
    public static let unknownChannel: Set<APNsReason> = [.channelNotRegistered, .badChannelId]
}
