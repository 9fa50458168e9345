import BlimpCore
import Foundation

/// The simulated broadcast channels of every bundle id: each one's storage policy, the device tokens whose activity
/// subscribed to it, and how many publishes it took (docs/references.md#broadcast-channels). Part of
/// ``DeviceRegistry``, under its lock.
struct BroadcastChannels {
    /// One channel.
    struct Channel {
        var bundleID: String
        var storagePolicy: APNsMessageStoragePolicy
        var createdAt: Double
        /// Creation order, for listings.
        var sequence: Int
        /// Tokens whose activity started with `input-push-channel` naming this channel.
        var subscribers: Set<String> = []
        var publishes = 0
    }

    private(set) var channels: [String: Channel] = [:]
    private var countByBundleID: [String: Int] = [:]
    private var created = 0

    /// The longest channel id taken as well formed: Apple says not to assume their size (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns), so this
    /// is generous; a longer one is `BadChannelId`.
    static let maximumIDLength = 256

    /// Makes a channel for `bundleID` with a fresh id (16 random bytes in base64, like Apple's), unless the bundle
    /// id has `limit` channels already.
    ///
    /// - Throws: 400 `CannotCreateChannelConfig` at the limit (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns).
    mutating func create(
        bundleID: String, storagePolicy: APNsMessageStoragePolicy, limit: Int, now: Double, random: inout some RandomNumberGenerator
    ) throws(Rejection) -> String {
        guard self.countByBundleID[bundleID, default: 0] < limit else { throw Rejection(.cannotCreateChannelConfig) }
        var id: String
        repeat {
            id = Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString()
        } while self.channels[id] != nil
        self.created += 1
        self.channels[id] = Channel(bundleID: bundleID, storagePolicy: storagePolicy, createdAt: now, sequence: self.created)
        self.countByBundleID[bundleID, default: 0] += 1
        return id
    }

    /// The id in an `apns-channel-id` header, checked: present, base64 of a sensible length.
    ///
    /// - Throws: 400 `MissingChannelId` or `BadChannelId` (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns).
    static func id(inHeader header: String?) throws(Rejection) -> String {
        guard let header, !header.isEmpty else { throw Rejection(.missingChannelId) }
        guard header.utf8.count <= Self.maximumIDLength, Data(base64Encoded: header) != nil else {
            throw Rejection(.badChannelId)
        }
        return header
    }

    /// The channel `id` of `bundleID`; `nil` when there is none (or it is another bundle id's).
    func channel(_ id: String, of bundleID: some StringProtocol) -> Channel? {
        guard let channel = self.channels[id], channel.bundleID == bundleID else { return nil }
        return channel
    }

    /// Every channel id of `bundleID`, oldest first.
    func ids(of bundleID: String) -> [String] {
        self.inOrder.filter { $0.value.bundleID == bundleID }.map(\.key)
    }

    /// Every channel, oldest first.
    var inOrder: [(key: String, value: Channel)] {
        self.channels.sorted { $0.value.sequence < $1.value.sequence }
    }

    /// Deletes channel `id` of `bundleID`; `false` when there is none.
    mutating func delete(_ id: String, of bundleID: String) -> Bool {
        guard self.channel(id, of: bundleID) != nil else { return false }
        self.channels[id] = nil
        self.countByBundleID[bundleID, default: 1] -= 1
        return true
    }

    /// Moves `token`'s subscription from channel `old` to channel `new` (either may be `nil`).
    mutating func move(_ token: String, from old: String?, to new: String?) {
        guard old != new else { return }
        if let old { self.channels[old]?.subscribers.remove(token) }
        if let new { self.channels[new]?.subscribers.insert(token) }
    }

    /// Counts a publish on channel `id` and returns its subscribers.
    mutating func publish(to id: String) -> Set<String> {
        self.channels[id]?.publishes += 1
        return self.channels[id]?.subscribers ?? []
    }
}

/// A broadcast channel as the admin endpoint shows it.
public struct SimulatedChannel: Sendable, Codable, Equatable {
    /// `apns-channel-id`.
    public var id: String
    public var bundleID: String
    /// `message-storage-policy`: 0 no message stored, 1 most recent message stored.
    public var storagePolicy: Int
    public var createdAt: Date
    /// How many simulated tokens' activities are subscribed.
    public var subscribers: Int
    /// Publishes accepted.
    public var publishes: Int

    init(id: String, channel: BroadcastChannels.Channel) {
        self.id = id
        self.bundleID = channel.bundleID
        self.storagePolicy = channel.storagePolicy.rawValue
        self.createdAt = Date(timeIntervalSince1970: channel.createdAt)
        self.subscribers = channel.subscribers.count
        self.publishes = channel.publishes
    }
}
