import Crypto
import Foundation
import Synchronization
import Testing

@testable import BlimpCore

@Suite struct ProviderTokenTests {
    let privateKey = P256.Signing.PrivateKey()
    var key: APNsSigningKey {
        try! APNsSigningKey(pem: self.privateKey.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
    }

    func decode(_ part: Substring) throws -> [String: Any] {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: base64))) as! [String: Any]
    }

    @Test func isAnES256JWTWithWholeSecondIat() throws {
        let token = try ProviderToken(key: self.key, now: Date(timeIntervalSince1970: 1_700_000_000.75))
        let parts = token.jwt.split(separator: ".")
        #expect(parts.count == 3)
        let header = try self.decode(parts[0])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "ABC123DEFG")
        // The claims' raw JSON: iat is a whole number, not a string or a fraction.
        var claimsBase64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        claimsBase64 += String(repeating: "=", count: (4 - claimsBase64.count % 4) % 4)
        let claims = String(decoding: try #require(Data(base64Encoded: claimsBase64)), as: UTF8.self)
        #expect(claims == #"{"iss":"DEF123GHIJ","iat":1700000000}"#)
        #expect(token.issuedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(token.authorization == "bearer \(token.jwt)")

        // The signature is raw R‖S over "header.claims" and verifies with the public key.
        var signatureBase64 = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        signatureBase64 += String(repeating: "=", count: (4 - signatureBase64.count % 4) % 4)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Data(base64Encoded: signatureBase64)))
        #expect(self.privateKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(!token.jwt.contains("="))
    }

    final class TestClock: Sendable {
        let time = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
        func advance(minutes: Double) { self.time.withLock { $0 += minutes * 60 } }
        var now: Date { self.time.withLock { $0 } }
    }

    @Test func isReusedUntilFiftyMinutesThenRenewed() throws {
        let clock = TestClock()
        let cache = ProviderTokenCache(key: self.key) { clock.now }
        let first = try cache.current()
        clock.advance(minutes: 49)
        #expect(try cache.current() == first)
        clock.advance(minutes: 1)
        let second = try cache.current()
        #expect(second != first)
        #expect(second.issuedAt == clock.now)
    }

    @Test func aRejectedTokenIsRenewedOnlyAfterTwentyMinutes() throws {
        let clock = TestClock()
        let cache = ProviderTokenCache(key: self.key) { clock.now }
        let first = try cache.current()
        clock.advance(minutes: 19)
        #expect(try cache.renew(afterRejecting: first) == nil)
        clock.advance(minutes: 1)
        let renewed = try #require(try cache.renew(afterRejecting: first))
        #expect(renewed != first)
        // Another connection reporting the same rejection gets the renewed token, not a third one.
        #expect(try cache.renew(afterRejecting: first) == renewed)
        #expect(try cache.current() == renewed)
    }
}
