import Foundation

/// What came back for one APNs request.
public enum APNsResponse: Sendable, Equatable {
    /// 200: APNs accepted the notification; `apnsID` is the request's `apns-id` or the one APNs generated (for a
    /// broadcast, its `apns-request-id`), `uniqueID` the `apns-unique-id` that APNs's sandbox adds to look the
    /// delivery up in the Push Notifications Console (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    case accepted(apnsID: String, uniqueID: String? = nil)
    /// An error status with its `reason`, and for 410 the time APNs learned the token was no longer valid.
    case rejected(status: Int, reason: APNsReason?, timestamp: Date?)
    /// No answer: the connection was lost or the request timed out before a response arrived.
    case noResponse

    /// Reads an error response: `status` and APNs's JSON body `{"reason": "…", "timestamp": <ms>}`.
    /// A body that is not such JSON still gives the status, without a reason.
    public static func rejected(status: Int, body: some Sequence<UInt8>) -> APNsResponse {
        let decoded = try? JSONDecoder().decode(ErrorBody.self, from: Data(body))
        return .rejected(
            status: status,
            reason: decoded?.reason.map(APNsReason.init(rawValue:)),
            timestamp: decoded?.timestamp.map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
        )
    }

    /// APNs's error body.
    private struct ErrorBody: Decodable {
        var reason: String?
        var timestamp: Int64?
    }
}
