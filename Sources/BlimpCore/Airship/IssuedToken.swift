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
        guard key.accepts(String(fields[2]), for: token.signedPart) else { return nil }
        return token
    }

    private var signedPart: String { "\(self.kind.rawValue):\(self.appKey):\(self.subject):\(self.expiresAt)" }
}

/// The key that signs ``IssuedToken``s, derived from the deployment's ``ServerKey`` so that every API process of a
/// deployment accepts every other's tokens. During a rotation of the server key, tokens signed under the previous
/// key's derived key still verify, so that devices are not all signed out at once.
public struct IssuedTokenKey: Sendable {
    /// What the key is derived for (HKDF's info).
    static let purpose = "blimp issued tokens v1"

    /// The key that signs, then the one that only verifies during a rotation.
    private let keys: [SymmetricKey]

    public init(serverKey: ServerKey) {
        self.keys = serverKey.derivedKeys(purpose: Self.purpose)
    }

    func mac(_ text: String) -> Data {
        Self.mac(text, under: self.keys[0])
    }

    /// Whether `tag` (base64url) is the MAC of `text` under one of the keys.
    func accepts(_ tag: String, for text: String) -> Bool {
        self.keys.contains { key in
            // Compared in constant time: a guess must not learn how many of its leading characters were right.
            ConstantTime.equal(Self.mac(text, under: key).base64URLEncodedString().utf8, tag.utf8)
        }
    }

    /// HMAC-SHA256 of `text` under `key`.
    static func mac(_ text: String, under key: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key))
    }
}
