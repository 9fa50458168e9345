@preconcurrency import Crypto
import Foundation

/// The deployment's key for secrets at rest (`BLIMP_SECRET_KEY`): 32 random bytes, written in base64.
///
/// It seals each app's APNs `.p8` key and app secret with AES-256-GCM. The app key is bound in as authenticated data,
/// so a sealed value copied onto another app's row does not open. Keys derived from it sign the tokens Blimp issues.
public struct ServerKey: Sendable {
    private let key: SymmetricKey

    /// Reads the key from its base64 text (`openssl rand -base64 32` makes one).
    public init(base64: String) throws(ServerKeyError) {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)),
            data.count == 32
        else {
            throw .malformed
        }
        self.key = SymmetricKey(data: data)
    }

    /// A new random key, as `blimp dev` makes for its state folder.
    public static func generate() -> (key: ServerKey, base64: String) {
        let data = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let base64 = data.base64EncodedString()
        return (try! ServerKey(base64: base64), base64)
    }

    /// Encrypts `plaintext`; the result holds nonce, ciphertext and tag.
    public func seal(_ plaintext: Data, boundTo context: String) -> Data {
        // AES.GCM.seal only fails for invalid nonces, and the nonce here is generated.
        try! AES.GCM.seal(plaintext, using: self.key, authenticating: Data(context.utf8)).combined!
    }

    /// A key for `purpose` derived with HKDF-SHA256, so that no two uses share key material.
    public func derivedKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: self.key, info: Data(purpose.utf8), outputByteCount: 32)
    }

    /// Decrypts what ``seal(_:boundTo:)`` produced with the same key and context.
    public func open(_ sealed: Data, boundTo context: String) throws(ServerKeyError) -> Data {
        do {
            return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: self.key, authenticating: Data(context.utf8))
        } catch {
            throw .cannotOpen
        }
    }
}

/// A problem with ``ServerKey``.
public enum ServerKeyError: Error, Equatable, CustomStringConvertible {
    case malformed
    case cannotOpen

    public var description: String {
        switch self {
        case .malformed:
            "BLIMP_SECRET_KEY must be 32 bytes in base64 (make one with: openssl rand -base64 32)"
        case .cannotOpen:
            "a stored secret does not open with this BLIMP_SECRET_KEY (was the key changed?)"
        }
    }
}
