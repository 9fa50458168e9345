@preconcurrency import Crypto
import Foundation

/// The key contact ids are derived from (`POST /api/contacts/identify/v2`), so that a named user's or a channel's
/// contact id is the same on every API process, every day.
///
/// Contact ids were once derived with the issued-token key of `BLIMP_SECRET_KEY`, which a rotation replaces; this key
/// is that same key material, kept in `deployment_secrets` (sealed under the server key), so ids outlive rotations.
public struct ContactIDKey: Sendable {
    private let key: SymmetricKey

    /// The key from its stored bytes; `nil` unless there are 32.
    public init?(bytes: Data) {
        guard bytes.count == 32 else { return nil }
        self.key = SymmetricKey(data: bytes)
    }

    /// The key contact ids were derived from before it was stored: the ``IssuedTokenKey`` of the server key that
    /// sealed the apps' secrets until then (`serverKey`'s current key).
    public static func derived(from serverKey: ServerKey) -> ContactIDKey {
        ContactIDKey(bytes: serverKey.derivedKey(purpose: IssuedTokenKey.purpose).withUnsafeBytes { Data($0) })!
    }

    /// The key's bytes, to be stored sealed.
    public var bytes: Data { self.key.withUnsafeBytes { Data($0) } }

    /// A UUID that `text` always maps to under this key, and that tells nothing about `text`.
    public func stableUUID(for text: String) -> UUID {
        let bytes = Array(IssuedTokenKey.mac(text, under: self.key).prefix(16))
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6] & 0x0F | 0x40, bytes[7],
                           bytes[8] & 0x3F | 0x80, bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
