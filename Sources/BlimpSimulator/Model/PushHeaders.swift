/// The headers of a device push, a broadcast or a channel request that APNs reads, picked out of a request in one
/// pass.
struct PushHeaders {
    var authorization: String?
    var apnsID: String?
    var topic: String?
    var pushType: String?
    var priority: String?
    var expiration: String?
    var collapseID: String?
    /// `apns-request-id` and `apns-channel-id`, of broadcast channels and publishes (see
    /// docs/references.md#broadcast-channels).
    var requestID: String?
    var channelID: String?
    /// Whether any header name appears twice (APNs answers 400 `DuplicateHeaders`, see
    /// https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    var hasDuplicates = false

    /// Reads `headers` (names in lower case); for a repeated header the first value is kept.
    init(_ headers: [(name: String, value: String)]) {
        for index in headers.indices {
            let (name, value) = headers[index]
            // Requests carry a handful of headers, so comparing pairs is cheaper than building a set.
            if headers[..<index].contains(where: { $0.name == name }) {
                self.hasDuplicates = true
                continue
            }
            switch name {
            case "authorization": self.authorization = value
            case "apns-id": self.apnsID = value
            case "apns-topic": self.topic = value
            case "apns-push-type": self.pushType = value
            case "apns-priority": self.priority = value
            case "apns-expiration": self.expiration = value
            case "apns-collapse-id": self.collapseID = value
            case "apns-request-id": self.requestID = value
            case "apns-channel-id": self.channelID = value
            default: break
            }
        }
    }
}
