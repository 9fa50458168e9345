import Foundation

/// An iOS 18 broadcast channel backing a Live Activity name (`/api/live_activity_channels`, a Blimp extension): the
/// `apns-channel-id` APNs's channel management created, its storage policy, and whether and why it was deleted
/// (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns). Never an Airship channel.
public struct LiveActivityChannel: Sendable, Equatable {
    /// Why a live activity channel is no longer live. The schema's CHECK on `live_activity_channels.deleted_reason`
    /// holds the same words.
    public enum Deletion: String, Sendable, CaseIterable {
        /// Deleted through `DELETE /api/live_activity_channels/{name}`.
        case admin
        /// An end was published through it; Blimp then deleted it at APNs.
        case ended
        /// APNs answered a publish with `ChannelNotRegistered` or `BadChannelId`: it no longer knows the channel.
        case apns
    }

    public var name: String
    public var apnsChannelID: String
    public var storagePolicy: APNsMessageStoragePolicy
    public var createdAt: Date
    public var deletedAt: Date?
    public var deletion: Deletion?
    /// For a channel APNs deleted: when an admin acknowledged it, after which the name takes pushes again.
    public var acknowledgedAt: Date?

    public init(
        name: String, apnsChannelID: String, storagePolicy: APNsMessageStoragePolicy, createdAt: Date, deletedAt: Date? = nil,
        deletion: Deletion? = nil, acknowledgedAt: Date? = nil
    ) {
        self.name = name
        self.apnsChannelID = apnsChannelID
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
        self.deletedAt = deletedAt
        self.deletion = deletion
        self.acknowledgedAt = acknowledgedAt
    }

    /// Not deleted: pushes of its name go through it.
    public var isLive: Bool { self.deletedAt == nil }

    /// Deleted by APNs and not yet acknowledged: the Push API refuses its name.
    public var blocksItsName: Bool { self.deletion == .apns && self.acknowledgedAt == nil }

    /// The channel in the API's shape.
    public var json: RawJSON {
        var members: [RawJSON.Member] = [
            .init("name", .string(self.name)),
            .init("apns_channel_id", .string(self.apnsChannelID)),
            .init("message_storage_policy", .integer(Int64(self.storagePolicy.rawValue))),
            .init("message_storage", .string(self.storagePolicy.word)),
            .init("created_at", .string(AirshipDate.format(self.createdAt))),
            .init("deleted_at", self.deletedAt.map { .string(AirshipDate.format($0)) } ?? .null),
            .init("deleted_by", self.deletion.map { .string($0.rawValue) } ?? .null),
        ]
        if let acknowledged = self.acknowledgedAt { members.append(.init("acknowledged_at", .string(AirshipDate.format(acknowledged)))) }
        return .object(members)
    }
}

extension APNsMessageStoragePolicy {
    /// The policy's word in the API: `none` (0, No Message Stored) or `most_recent` (1, Most Recent Message Stored).
    public var word: String {
        switch self {
        case .noMessageStored: "none"
        case .mostRecentMessageStored: "most_recent"
        }
    }

    /// `message_storage_policy` as the API takes it: APNs's number (0 or 1) or its word (``word``).
    static func parse(_ reader: JSONObjectReader, _ key: String) throws(InvalidField) -> APNsMessageStoragePolicy? {
        guard let value = reader.raw(key) else { return nil }
        switch value {
        case .number(let text):
            if let number = Int(text), let policy = Self(rawValue: number) { return policy }
        case .string(let text):
            if let policy = Self.allCases.first(where: { $0.word == text }) { return policy }
        default:
            break
        }
        throw InvalidField(
            reader.path(of: key), "\(key) is 0 (or \"none\": no message stored) or 1 (or \"most_recent\": the most recent message stored)")
    }
}
