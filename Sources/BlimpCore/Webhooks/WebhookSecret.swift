import Foundation

/// A webhook endpoint's signing secret as the Standard Webhooks specification gives it
/// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme):
/// `whsec_` and the base64 of 32 random bytes. The bytes are the HMAC key.
public struct WebhookSecret: Sendable, Equatable {
    public static let prefix = "whsec_"

    /// The HMAC-SHA256 key.
    public let bytes: Data

    public init(bytes: Data) {
        self.bytes = bytes
    }

    /// A new secret from the system's secure random source.
    public static func make() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        return WebhookSecret(bytes: Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
    }

    /// `whsec_…`, as shown once to the endpoint's owner.
    public var text: String { Self.prefix + self.bytes.base64EncodedString() }
}
