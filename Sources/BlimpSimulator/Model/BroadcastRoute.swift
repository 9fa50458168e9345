/// What a request outside `/3/device/` asks of APNs's broadcast APIs, read from its method and path (see
/// docs/references.md#broadcast-channels).
struct BroadcastRoute {
    enum Operation {
        /// `POST /1/apps/{bundle-id}/channels`.
        case createChannel
        /// `GET /1/apps/{bundle-id}/channels` with `apns-channel-id`.
        case readChannel
        /// `DELETE /1/apps/{bundle-id}/channels` with `apns-channel-id`.
        case deleteChannel
        /// `GET /1/apps/{bundle-id}/all-channels`.
        case listChannels
        /// `POST /4/broadcasts/apps/{bundle-id}`.
        case publish
    }

    let operation: Operation
    let bundleID: String

    /// - Throws: 404 `BadPath` for any other path, 405 `MethodNotAllowed` for a method the path does not take,
    ///   400 `TopicDisallowed` for a bundle id with a push-type suffix ("Ensure that no push type suffix is added to
    ///   the bundle ID", https://developer.apple.com/documentation/usernotifications/handling-error-responses-from-apns).
    init(method: String, path: String) throws(Rejection) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let methods: [String: Operation]
        let bundleID: Substring
        switch parts.count {
        case 5 where parts[0].isEmpty && parts[1] == "1" && parts[2] == "apps" && parts[4] == "channels":
            (bundleID, methods) = (parts[3], ["POST": .createChannel, "GET": .readChannel, "DELETE": .deleteChannel])
        case 5 where parts[0].isEmpty && parts[1] == "1" && parts[2] == "apps" && parts[4] == "all-channels":
            (bundleID, methods) = (parts[3], ["GET": .listChannels])
        case 5 where parts[0].isEmpty && parts[1] == "4" && parts[2] == "broadcasts" && parts[3] == "apps":
            (bundleID, methods) = (parts[4], ["POST": .publish])
        default:
            throw Rejection(.badPath)
        }
        guard !bundleID.isEmpty, !bundleID.utf8.contains(where: { $0 <= 0x20 }) else { throw Rejection(.badPath) }
        guard let operation = methods[method] else { throw Rejection(.methodNotAllowed) }
        guard !bundleID.contains(".push-type.") else { throw Rejection(.topicDisallowed) }
        self.operation = operation
        self.bundleID = String(bundleID)
    }
}
