@preconcurrency import Crypto
import Foundation

/// A bearer token Blimp issues to one channel (`GET /api/auth/device`) or one contact
/// (`POST /api/contacts/identify/v2`), valid for an hour.
///
/// Tokens are stateless: `<subject>.<expiry>.<mac>`, where the MAC (HMAC-SHA256 under a key derived from
/// `BLIMP_SECRET_KEY`) covers the kind, the app key, the subject and the expiry. So checking one costs no database
/// read, and a token of one app or kind is worthless for another.
public struct IssuedToken: Sendable, Equatable {
    /// What the token stands for.
    public enum Kind: String, Sendable {
        case channel
        case contact
    }

    /// How long an issued token lasts; the SDK caches it until 30 s before expiry.
    public static let lifetime: TimeInterval = 3600

    public let kind: Kind
    public let appKey: String
    /// The channel id or contact id, lower-case.
    public let subject: String
    /// Whole seconds since 1970.
    public let expiresAt: Int64

    public init(kind: Kind, appKey: String, subject: String, expiresAt: Int64) {
        self.kind = kind
        self.appKey = appKey
        self.subject = subject
        self.expiresAt = expiresAt
    }

    /// The token's text, signed with `key`.
    public func text(signedWith key: IssuedTokenKey) -> String {
        "\(self.subject).\(self.expiresAt).\(key.mac(self.signedPart).base64URLEncodedString())"
    }

    /// The token `text` stands for, if `key` signed it for `kind` and `appKey` and it has not expired at `now`.
    public static func verify(
        _ text: String,
        kind: Kind,
        appKey: String,
        key: IssuedTokenKey,
        now: Date
    ) -> IssuedToken? {
        let fields = text.split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == 3, let expiresAt = Int64(fields[1]), Double(expiresAt) > now.timeIntervalSince1970 else {
            return nil
        }
        let token = IssuedToken(kind: kind, appKey: appKey, subject: String(fields[0]), expiresAt: expiresAt)
        // Compared in constant time: a guess must not learn how many of its leading characters were right.
        guard ConstantTime.equal(key.mac(token.signedPart).base64URLEncodedString().utf8, fields[2].utf8) else { return nil }
        return token
    }

    private var signedPart: String { "\(self.kind.rawValue):\(self.appKey):\(self.subject):\(self.expiresAt)" }
}

/// The key that signs ``IssuedToken``s, derived from the deployment's ``ServerKey`` so that every API process of a
/// deployment accepts every other's tokens.
public struct IssuedTokenKey: Sendable {
    private let key: SymmetricKey

    public init(serverKey: ServerKey) {
        self.key = serverKey.derivedKey(purpose: "blimp issued tokens v1")
    }

    /// A UUID that `text` always maps to under this key, and that tells nothing about `text`.
    public func stableUUID(for text: String) -> UUID {
        let bytes = Array(self.mac(text).prefix(16))
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6] & 0x0F | 0x40, bytes[7],
                           bytes[8] & 0x3F | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    func mac(_ text: String) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: self.key))
    }
}
