import BlimpCore
import Foundation

/// One notification for one device token: the headers APNs reads and the JSON payload
/// (docs/references.md#live-activity-payloads).
public struct APNsRequest: Sendable {
    public var deviceToken: DeviceToken
    public var pushType: APNsPushType
    /// `apns-topic`: the bundle id, plus `.push-type.liveactivity` for Live Activities.
    public var topic: String
    /// `apns-priority`. Defaults to ``APNsPriority/immediate``.
    public var priority: APNsPriority
    /// `apns-expiration` in epoch seconds; `nil` leaves it to APNs's storage policy, `0` means one attempt.
    public var expiration: Int64?
    /// `apns-id`: echoed back by APNs. `nil` (the default) lets the connection make a new random one.
    public var apnsID: UUID?
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String?
    /// The JSON payload, at most 4096 bytes.
    public var payload: [UInt8]

    public init(
        deviceToken: DeviceToken,
        pushType: APNsPushType,
        topic: String,
        priority: APNsPriority = .immediate,
        expiration: Int64? = nil,
        apnsID: UUID? = nil,
        collapseID: String? = nil,
        payload: [UInt8]
    ) {
        self.deviceToken = deviceToken
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.apnsID = apnsID
        self.collapseID = collapseID
        self.payload = payload
    }

    /// The Live Activity topic for a bundle id.
    public static func liveActivityTopic(bundleID: String) -> String { "\(bundleID).push-type.liveactivity" }
}
