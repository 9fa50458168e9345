/// A broadcast channel's `message-storage-policy`, fixed when APNs creates the channel
/// (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
public enum APNsMessageStoragePolicy: Int, Sendable, Hashable, Codable, CaseIterable {
    /// 0: only devices connected when a message is published receive it; a higher publishing budget.
    case noMessageStored = 0
    /// 1: APNs keeps the most recent message for up to 8 hours for devices that connect later.
    case mostRecentMessageStored = 1
}
