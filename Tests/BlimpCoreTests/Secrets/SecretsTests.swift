import Foundation
import Testing

@testable import BlimpCore

@Suite struct RandomTokenTests {
    @Test func tokensHaveAirshipsShapeAndDiffer() {
        let tokens = (0..<100).map { _ in RandomToken.make() }
        for token in tokens {
            #expect(token.count == 22)
            #expect(token.wholeMatch(of: /[A-Za-z0-9_-]{22}/) != nil)
            #expect(RandomToken.isWellFormed(token))
        }
        #expect(Set(tokens).count == tokens.count)
    }

    /// A key that starts with `-` would read as a missing value after `--app-key` on a command line.
    @Test func noTokenStartsWithADash() {
        #expect((0..<2000).map { _ in RandomToken.make() }.allSatisfy { !$0.hasPrefix("-") })
    }

    @Test(arguments: ["", "short", String(repeating: "a", count: 23), "abcdefghijklmnopqrstu+", "abcdefghijklmnopqrst=="])
    func malformedTokensAreRecognised(_ value: String) {
        #expect(!RandomToken.isWellFormed(value))
    }
}

@Suite struct SecretDigestTests {
    @Test func matchesOnlyTheSameSecret() {
        let secret = RandomToken.make()
        let digest = SecretDigest(of: secret)
        #expect(digest.bytes.count == 32)
        #expect(digest.matches(secret))
        #expect(!digest.matches(RandomToken.make()))
        #expect(!digest.matches(""))
        #expect(SecretDigest(bytes: digest.bytes).matches(secret))
    }

    @Test func isSHA256() {
        // printf abc | sha256sum
        #expect(
            SecretDigest(of: "abc").bytes.map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
    }
}

@Suite struct ServerKeyTests {
    @Test func sealThenOpenRoundTrips() throws {
        let (key, base64) = ServerKey.generate()
        let sealed = key.seal(Data("secret p8".utf8), boundTo: "app-key-1")
        #expect(!sealed.contains(Data("secret p8".utf8)))
        #expect(try key.open(sealed, boundTo: "app-key-1") == Data("secret p8".utf8))
        // The same key read back from its base64 text opens it too.
        #expect(try ServerKey(base64: base64).open(sealed, boundTo: "app-key-1") == Data("secret p8".utf8))
    }

    @Test func anotherKeyOrContextDoesNotOpen() {
        let (key, _) = ServerKey.generate()
        let sealed = key.seal(Data("secret".utf8), boundTo: "app-key-1")
        #expect(throws: ServerKeyError.cannotOpen) { try ServerKey.generate().key.open(sealed, boundTo: "app-key-1") }
        #expect(throws: ServerKeyError.cannotOpen) { try key.open(sealed, boundTo: "app-key-2") }
        #expect(throws: ServerKeyError.cannotOpen) { try key.open(Data(sealed.dropLast()), boundTo: "app-key-1") }
    }

    @Test(arguments: ["", "not base64!", Data(count: 16).base64EncodedString(), Data(count: 33).base64EncodedString()])
    func malformedKeysAreRefused(_ text: String) {
        #expect(throws: ServerKeyError.malformed) { try ServerKey(base64: text) }
        #expect(throws: ServerKeyError.malformedPrevious) { try ServerKey(base64: ServerKey.generate().base64, previousBase64: text) }
    }

    /// During a rotation the previous key opens what it sealed, but only the current key seals.
    @Test func thePreviousKeyOpensButNeverSeals() throws {
        let (old, oldBase64) = ServerKey.generate()
        let (new, newBase64) = ServerKey.generate()
        let rotating = try ServerKey(base64: newBase64, previousBase64: oldBase64)
        #expect(rotating.hasPrevious && !new.hasPrevious)
        let underOld = old.seal(Data("p8".utf8), boundTo: "app-key-1")
        #expect(try rotating.open(underOld, boundTo: "app-key-1") == Data("p8".utf8))
        #expect(throws: ServerKeyError.cannotOpen) { try rotating.open(underOld, boundTo: "app-key-2") }
        let underNew = rotating.seal(Data("p8".utf8), boundTo: "app-key-1")
        #expect(try new.open(underNew, boundTo: "app-key-1") == Data("p8".utf8))
        #expect(throws: ServerKeyError.cannotOpen) { try old.open(underNew, boundTo: "app-key-1") }
        #expect(throws: ServerKeyError.cannotOpen) { try new.open(underOld, boundTo: "app-key-1") }
    }

    /// `resealed` moves what the previous key sealed under the current one, leaves the current key's alone, and
    /// refuses what neither opens.
    @Test func resealingMovesOnlyWhatThePreviousKeySealed() throws {
        let (old, oldBase64) = ServerKey.generate()
        let (new, newBase64) = ServerKey.generate()
        let rotating = try ServerKey(base64: newBase64, previousBase64: oldBase64)
        let resealed = try #require(try rotating.resealed(old.seal(Data("secret".utf8), boundTo: "k"), boundTo: "k"))
        #expect(try new.open(resealed, boundTo: "k") == Data("secret".utf8))
        #expect(try rotating.resealed(resealed, boundTo: "k") == nil)
        #expect(throws: ServerKeyError.cannotOpen) { try rotating.resealed(ServerKey.generate().key.seal(Data("x".utf8), boundTo: "k"), boundTo: "k") }
        #expect(throws: ServerKeyError.cannotOpen) { try new.resealed(old.seal(Data("x".utf8), boundTo: "k"), boundTo: "k") }
    }
}
