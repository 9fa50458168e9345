import BlimpCore
import Foundation
import Testing

@Suite struct ContactIDKeyTests {
    static let serverKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
    /// Ids as Blimp derived them before contact ids had a key of their own: Python computed them (HMAC-SHA256 under
    /// HKDF-SHA256(server key, "blimp issued tokens v1"), its first 16 bytes as a version 4 UUID), and the code
    /// before this key existed (`IssuedTokenKey.stableUUID`) gave the same.
    static let ids = [
        "named-user:AAAAAAAAAAAAAAAAAAAAAA:user-1": "dc82a0b4-b8d8-4bb0-9ad6-1b1129932c78",
        "channel:AAAAAAAAAAAAAAAAAAAAAA:6f9619ff-8b86-4011-b42d-00c04fc964ff": "5b1a1322-deb9-4255-b52d-5c22dd30f1e4",
    ]

    @Test func idsAreThoseDerivedBeforeTheKeyWasStored() throws {
        let key = ContactIDKey.derived(from: try ServerKey(base64: Self.serverKey))
        for (text, id) in Self.ids { #expect(key.stableUUID(for: text).uuidString.lowercased() == id) }
    }

    /// During a rotation the ids in use came from the previous key, the last of the configured keys.
    @Test func duringARotationThePreviousKeyGivesTheIdsInUse() throws {
        let rotating = try ServerKey(base64: ServerKey.generate().base64, previousBase64: Self.serverKey)
        let keys = rotating.keys.map(ContactIDKey.derived(from:))
        #expect(keys.count == 2)
        for (text, id) in Self.ids {
            #expect(keys[1].stableUUID(for: text).uuidString.lowercased() == id)
            #expect(keys[0].stableUUID(for: text).uuidString.lowercased() != id)
        }
    }

    @Test func theStoredBytesGiveTheSameIds() throws {
        let key = ContactIDKey.derived(from: try ServerKey(base64: Self.serverKey))
        let stored = try #require(ContactIDKey(bytes: key.bytes))
        for (text, id) in Self.ids { #expect(stored.stableUUID(for: text).uuidString.lowercased() == id) }
        #expect(ContactIDKey(bytes: Data(count: 31)) == nil)
        #expect(ContactIDKey(bytes: Data(count: 33)) == nil)
    }
}
