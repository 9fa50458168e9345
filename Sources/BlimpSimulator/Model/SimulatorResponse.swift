import BlimpCore

/// What the simulator answers to one request, as APNs would.
public struct SimulatorResponse: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The request's `apns-id`, or one generated (lower-case UUID).
    public var apnsID: String
    /// The error reason; `nil` on 200.
    public var reason: APNsReason?
    /// With 410: milliseconds since the epoch at which the token stopped being valid.
    public var timestamp: Int64?

    public init(status: Int, apnsID: String, reason: APNsReason? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.reason = reason
        self.timestamp = timestamp
    }

    /// APNs's body: empty on success, else `{"reason":"…"}` (+ `"timestamp"` on 410).
    public var body: [UInt8] {
        guard let reason = self.reason else { return [] }
        if let timestamp = self.timestamp {
            return Array(#"{"reason":"\#(reason.rawValue)","timestamp":\#(timestamp)}"#.utf8)
        }
        return Array(#"{"reason":"\#(reason.rawValue)"}"#.utf8)
    }
}
