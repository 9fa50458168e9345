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
    }
}
