import BlimpCore

/// What the simulator answers to one request, as APNs would.
public struct SimulatorResponse: Sendable, Equatable {
    /// The header that carries the request's id: `apns-id` for device pushes, `apns-request-id` for broadcast
    /// channels and publishes (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns).
    public enum IDHeader: String, Sendable {
        case apnsID = "apns-id"
        case requestID = "apns-request-id"
    }

    /// The HTTP status.
    public var status: Int
    /// The request's `apns-id` (or `apns-request-id`), or one generated (lower-case UUID).
    public var apnsID: String
    /// Which header ``apnsID`` goes out in.
    public var idHeader: IDHeader = .apnsID
    /// The error reason; `nil` on success.
    public var reason: APNsReason?
    /// With 410: milliseconds since the epoch at which the token stopped being valid.
    public var timestamp: Int64?
    /// `apns-unique-id`: on a 200 to a device push in the sandbox (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    public var uniqueID: String?
    /// `apns-channel-id`: on 201 to a channel's creation (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
    public var channelID: String?
    /// A success's JSON body: a channel's settings, or the list of channels.
    public var content: [UInt8] = []

    public init(status: Int, apnsID: String, reason: APNsReason? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.reason = reason
        self.timestamp = timestamp
    }

    /// APNs's body: ``content`` on success, else `{"reason":"…"}` (+ `"timestamp"` on 410).
    public var body: [UInt8] {
        guard let reason = self.reason else { return self.content }
        if let timestamp = self.timestamp {
            return Array(#"{"reason":"\#(reason.rawValue)","timestamp":\#(timestamp)}"#.utf8)
        }
        return Array(#"{"reason":"\#(reason.rawValue)"}"#.utf8)
    }
}
