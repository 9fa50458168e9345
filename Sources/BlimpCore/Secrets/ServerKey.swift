@preconcurrency import Crypto
import Foundation

/// The deployment's key for secrets at rest (`BLIMP_SECRET_KEY`): 32 random bytes, written in base64; during a
/// rotation, with the key it replaces (`BLIMP_PREVIOUS_SECRET_KEY`).
///
/// It seals each app's APNs `.p8` key and app secret with AES-256-GCM. The app key is bound in as authenticated data,
/// so a sealed value copied onto another app's row does not open. Keys derived from it sign the tokens Blimp issues.
/// Only the current key seals; what does not open with it is tried with the previous one, so that every process keeps
/// working while `blimp secret-key rotate` seals everything again under the current key.
public struct ServerKey: Sendable {
    private let current: SymmetricKey
    private let previous: SymmetricKey?

    /// Reads the key from its base64 text (`openssl rand -base64 32` makes one), and the previous key's, if any.
    public init(base64: String, previousBase64: String? = nil) throws(ServerKeyError) {
        guard let current = Self.key(base64) else { throw .malformed }
        guard let previousBase64 else {
            self.init(current: current, previous: nil)
            return
        }
        guard let previous = Self.key(previousBase64) else { throw .malformedPrevious }
        self.init(current: current, previous: previous)
    }

    private init(current: SymmetricKey, previous: SymmetricKey?) {
        self.current = current
        self.previous = previous
    }

    /// A new random key, as `blimp dev` makes for its state folder.
    public static func generate() -> (key: ServerKey, base64: String) {
        let base64 = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
        return (try! ServerKey(base64: base64), base64)
    }

    /// Whether a previous key is configured: a rotation is under way.
    public var hasPrevious: Bool { self.previous != nil }

    /// Each configured key on its own, the current one first.
    public var keys: [ServerKey] {
        [self.current, self.previous].compactMap { $0 }.map { ServerKey(current: $0, previous: nil) }
    }

    /// Encrypts `plaintext` under the current key; the result holds nonce, ciphertext and tag.
    public func seal(_ plaintext: Data, boundTo context: String) -> Data {
        // AES.GCM.seal only fails for invalid nonces, and the nonce here is generated.
        try! AES.GCM.seal(plaintext, using: self.current, authenticating: Data(context.utf8)).combined!
    }

    /// Decrypts what ``seal(_:boundTo:)`` produced with the same context, under the current key or the previous one.
    public func open(_ sealed: Data, boundTo context: String) throws(ServerKeyError) -> Data {
        if let plaintext = Self.open(sealed, boundTo: context, with: self.current) { return plaintext }
        if let previous = self.previous, let plaintext = Self.open(sealed, boundTo: context, with: previous) { return plaintext }
        throw .cannotOpen
    }

    /// `sealed` sealed again under the current key when only the previous key opens it; `nil` when the current key
    /// already does.
    public func resealed(_ sealed: Data, boundTo context: String) throws(ServerKeyError) -> Data? {
        if Self.open(sealed, boundTo: context, with: self.current) != nil { return nil }
        return self.seal(try self.open(sealed, boundTo: context), boundTo: context)
    }

    /// A key for `purpose` derived from the current key with HKDF-SHA256, so that no two uses share key material.
    public func derivedKey(purpose: String) -> SymmetricKey {
        Self.derive(purpose, from: self.current)
    }

    /// The keys for `purpose` derived from the current key, then from the previous one when it is configured.
    public func derivedKeys(purpose: String) -> [SymmetricKey] {
        self.keys.map { $0.derivedKey(purpose: purpose) }
    }

    private static func derive(_ purpose: String, from key: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(purpose.utf8), outputByteCount: 32)
    }

    private static func open(_ sealed: Data, boundTo context: String, with key: SymmetricKey) -> Data? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed) else { return nil }
        return try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
    }

    private static func key(_ base64: String) -> SymmetricKey? {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)), data.count == 32 else {
            return nil
        }
        return SymmetricKey(data: data)
    }
}

/// A problem with ``ServerKey``; never shows a key or a plaintext.
public enum ServerKeyError: Error, Equatable, CustomStringConvertible {
    case malformed
    case malformedPrevious
    /// A sealed value opens with neither key (or its context differs); the description follows what names it.
    case cannotOpen

    public var description: String {
        switch self {
        case .malformed:
            "BLIMP_SECRET_KEY must be 32 bytes in base64 (make one with: blimp secret-key generate)"
        case .malformedPrevious:
            "BLIMP_PREVIOUS_SECRET_KEY must be 32 bytes in base64: the BLIMP_SECRET_KEY being replaced"
        case .cannotOpen:
            "it opens with neither BLIMP_SECRET_KEY nor BLIMP_PREVIOUS_SECRET_KEY (was the key changed without keeping the old one as BLIMP_PREVIOUS_SECRET_KEY?)"
        }
    }
}
