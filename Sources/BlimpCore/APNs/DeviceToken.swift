/// An APNs device token (alert, Live Activity update, or push-to-start token) as lower-case hex.
///
/// Apple says not to assume a token size; Live Activity tokens have been seen at 160 hex characters, so any even
/// length from 64 to 200 is accepted (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns). A stored token is
/// checked once, as its row is read; whatever holds a `DeviceToken` sends it without checking it again.
public struct DeviceToken: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The token in lower-case hex, as it goes into `/3/device/<token>`.
    public let hex: String

    /// The accepted length in hex digits (32 to 100 bytes).
    public static let hexLength = 64...200

    /// Accepts hex in either case; `nil` for anything else or an implausible length.
    public init?(_ text: String) {
        guard Self.hexLength.contains(text.utf8.count), text.utf8.count % 2 == 0,
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) || (0x61...0x66).contains($0) })
        else {
            return nil
        }
        self.hex = text.lowercased()
    }

    /// The same as ``init(_:)``: a stored token (lower-case hex) reads as a `DeviceToken`.
    public init?(rawValue: String) {
        self.init(rawValue)
    }

    /// The token as it is stored: ``hex``.
    public var rawValue: String { self.hex }

    /// Redacted for logs: the first 8 characters only.
    public var description: String { "\(self.hex.prefix(8))…" }
}
