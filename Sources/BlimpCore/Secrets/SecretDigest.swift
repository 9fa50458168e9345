import Crypto
import Foundation

/// The stored form of an app secret: its SHA-256 digest.
///
/// Secrets are 128-bit random tokens (``RandomToken``), so a plain SHA-256 is enough to make a stolen table useless;
/// a slow password hash would only slow down every authenticated request.
public struct SecretDigest: Sendable, Equatable {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// The digest of `secret`.
    public init(of secret: String) {
        self.bytes = Array(SHA256.hash(data: Data(secret.utf8)))
    }

    /// A digest read back from storage.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether `secret` hashes to this digest, compared in constant time.
    public func matches(_ secret: String) -> Bool {
        ConstantTime.equal(SecretDigest(of: secret).bytes, self.bytes)
    }
}
