/// Why a channel-management request failed (https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns).
public enum APNsBroadcastError: Error, Sendable, Equatable, CustomStringConvertible {
    /// APNs answered with an error status and, usually, a reason: `CannotCreateChannelConfig` when the app's
    /// channel limit is reached, `ChannelNotRegistered` or `BadChannelId` for an unknown channel, `FeatureNotEnabled`
    /// without the broadcast capability.
    case rejected(status: Int, reason: APNsReason?)
    /// No answer: the connection failed or timed out.
    case noResponse

    public var description: String {
        switch self {
        case .rejected(let status, let reason): "APNs answered \(status)\(reason.map { " \($0.rawValue)" } ?? "")"
        case .noResponse: "APNs did not answer"
        }
    }
}
