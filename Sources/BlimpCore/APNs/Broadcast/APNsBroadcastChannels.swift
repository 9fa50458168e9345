import Foundation

/// APNs's channel-management API for iOS 18 broadcast channels (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns):
/// `POST`, `GET` and `DELETE /1/apps/{bundle-id}/channels` (the channel id in the `apns-channel-id` header) and
/// `GET /1/apps/{bundle-id}/all-channels`, signed with the app's provider token.
///
/// "Channel" here is always an APNs broadcast channel, never an Airship channel. Channel ids are opaque base64
/// strings: never assume their size.
public protocol APNsBroadcastChannels: Sendable {
    /// Creates a channel (201 with `apns-channel-id`) and returns its id.
    func create(
        storagePolicy: APNsMessageStoragePolicy, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async throws(APNsBroadcastError) -> String

    /// The storage policy of an existing channel.
    func storagePolicy(
        of channelID: String, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async throws(APNsBroadcastError) -> APNsMessageStoragePolicy

    /// Deletes a channel (204). Its id can never be used again.
    func delete(
        _ channelID: String, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async throws(APNsBroadcastError)

    /// Every channel id of the app in `environment`.
    func list(bundleID: String, key: APNsSigningKey, environment: APNsEnvironment) async throws(APNsBroadcastError) -> [String]
}

/// Publishing to a broadcast channel: `POST /4/broadcasts/apps/{bundle-id}` with `apns-channel-id`, once for every
/// device subscribed to the channel (https://developer.apple.com/documentation/usernotifications/sending-broadcast-push-notification-requests-to-apns).
public protocol APNsBroadcastPublishing: Sendable {
    /// Publishes `broadcast`; `.accepted` carries the `apns-request-id` APNs answered with.
    func publish(
        _ broadcast: APNsBroadcastRequest, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async -> APNsResponse
}

/// One broadcast publish: the channel, its headers and the Live Activity payload (at most
/// ``APNsBroadcastRequest/maxPayloadBytes``).
public struct APNsBroadcastRequest: Sendable, Equatable {
    /// `apns-channel-id`.
    public var channelID: String
    /// `apns-priority`: 5 or 10 for Live Activities.
    public var priority: APNsPriority
    /// `apns-expiration` in epoch seconds; must be 0 on a channel that stores no message.
    public var expiration: Int64
    /// `apns-request-id`, echoed back; `nil` lets the client make a random one.
    public var requestID: UUID?
    /// The JSON payload, the same `aps` shape as a device's Live Activity push.
    public var payload: [UInt8]

    public init(channelID: String, priority: APNsPriority, expiration: Int64, requestID: UUID? = nil, payload: [UInt8]) {
        self.channelID = channelID
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
        self.payload = payload
    }

    /// A broadcast payload is at most 5 KB (https://developer.apple.com/documentation/usernotifications/sending-broadcast-push-notification-requests-to-apns).
    public static let maxPayloadBytes = 5120
}
