import BlimpCore

/// The `:path` of a device push: `/3/device/<hex token>` (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns).
enum DevicePath {
    private static let prefix = "/3/device/"

    /// The lower-case token in `path`.
    ///
    /// - Throws: 404 `BadPath` for another path, 400 `MissingDeviceToken` without a token, 400 `BadDeviceToken` for
    ///   a token that is not 64 to 200 hex characters.
    static func token(in path: String) throws(Rejection) -> DeviceToken {
        guard path.hasPrefix(Self.prefix) else {
            throw Rejection(path == "/3/device" ? .missingDeviceToken : .badPath)
        }
        let text = path.utf8.dropFirst(Self.prefix.utf8.count)
        guard !text.isEmpty else { throw Rejection(.missingDeviceToken) }
        guard let token = DeviceToken(String(Substring(text))) else { throw Rejection(.badDeviceToken) }
        return token
    }
}
