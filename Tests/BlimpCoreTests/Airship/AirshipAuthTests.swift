import BlimpCore
import Foundation
import Testing

@Suite struct AirshipAuthTests {
    /// The value Python computes: `base64(hmac.new(secret, "key:nonce:timestamp", sha256))` (urbanairship/ios-library, `Airship/AirshipCore/Source/AirshipRequestSession.swift`).
    @Test func signaturesMatchTheSDKsFormula() {
        let signature = SDKSignature(appSecret: "BBBBBBBBBBBBBBBBBBBBBB")
        let token = signature.sign(["AAAAAAAAAAAAAAAAAAAAAA", "nonce-1", "2026-11-22 08:00:00"])
        #expect(token == "y71p8/1cKOqpnynlz660PoYOSMMVAiXVrU0MTib+imI=")
        #expect(signature.isValid(token, parts: ["AAAAAAAAAAAAAAAAAAAAAA", "nonce-1", "2026-11-22 08:00:00"]))
        #expect(!signature.isValid(token, parts: ["AAAAAAAAAAAAAAAAAAAAAA", "nonce-2", "2026-11-22 08:00:00"]))
        #expect(!SDKSignature(appSecret: "B").isValid("not base64!", parts: []))
    }

    /// One signature serves every request of its app: using it never changes its keyed state, from any thread.
    @Test func oneSignatureSignsManyTokensConcurrently() async {
        let signature = SDKSignature(appSecret: "BBBBBBBBBBBBBBBBBBBBBB")
        let tokens = await withTaskGroup(of: String.self) { group in
            for _ in 0..<64 {
                group.addTask { signature.sign(["AAAAAAAAAAAAAAAAAAAAAA", "nonce-1", "2026-11-22 08:00:00"]) }
            }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens == ["y71p8/1cKOqpnynlz660PoYOSMMVAiXVrU0MTib+imI="])
        #expect(signature.sign(["AAAAAAAAAAAAAAAAAAAAAA", "nonce-2", "2026-11-22 08:00:00"]) != tokens.first)
    }

    @Test func issuedTokensVerifyOnlyForTheirKindAppAndLifetime() {
        let key = IssuedTokenKey(serverKey: ServerKey.generate().key)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = IssuedToken(kind: .channel, appKey: "app-1", subject: "c1", expiresAt: 1_800_003_600)
        let text = token.text(signedWith: key)
        #expect(IssuedToken.verify(text, kind: .channel, appKey: "app-1", key: key, now: now) == token)
        #expect(IssuedToken.verify(text, kind: .contact, appKey: "app-1", key: key, now: now) == nil)
        #expect(IssuedToken.verify(text, kind: .channel, appKey: "app-2", key: key, now: now) == nil)
        #expect(IssuedToken.verify(text, kind: .channel, appKey: "app-1", key: key, now: now.addingTimeInterval(3600)) == nil)
        let otherKey = IssuedTokenKey(serverKey: ServerKey.generate().key)
        #expect(IssuedToken.verify(text, kind: .channel, appKey: "app-1", key: otherKey, now: now) == nil)
        let forged = text.replacingOccurrences(of: "c1.", with: "c2.")
        #expect(IssuedToken.verify(forged, kind: .channel, appKey: "app-1", key: key, now: now) == nil)
    }

    /// Tokens signed under the previous server key verify while it is configured; new ones are signed under the current.
    @Test func issuedTokensOutliveARotationWhileThePreviousKeyIsConfigured() throws {
        let (old, oldBase64) = ServerKey.generate()
        let (new, newBase64) = ServerKey.generate()
        let rotating = IssuedTokenKey(serverKey: try ServerKey(base64: newBase64, previousBase64: oldBase64))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let token = IssuedToken(kind: .contact, appKey: "app-1", subject: "c1", expiresAt: 1_800_003_600)
        let underOld = token.text(signedWith: IssuedTokenKey(serverKey: old))
        #expect(IssuedToken.verify(underOld, kind: .contact, appKey: "app-1", key: rotating, now: now) == token)
        #expect(IssuedToken.verify(underOld, kind: .contact, appKey: "app-1", key: IssuedTokenKey(serverKey: new), now: now) == nil)
        let underRotating = token.text(signedWith: rotating)
        #expect(underRotating == token.text(signedWith: IssuedTokenKey(serverKey: new)))
        #expect(IssuedToken.verify(underRotating, kind: .contact, appKey: "app-1", key: IssuedTokenKey(serverKey: new), now: now) == token)
        #expect(IssuedToken.verify(underRotating, kind: .contact, appKey: "app-1", key: IssuedTokenKey(serverKey: old), now: now) == nil)
    }

    @Test func datesUseAirshipsForm() {
        let date = Date(timeIntervalSince1970: 1_700_000_000.75)
        #expect(AirshipDate.format(date) == "2023-11-14T22:13:20")
        #expect(AirshipDate.parse("2023-11-14 22:13:20") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(AirshipDate.parse("2023-11-14T22:13:20.123Z") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(AirshipDate.parse("2023-13-14 22:13:20") == nil)
        #expect(AirshipDate.parse("2026-02-30T00:00:00") == nil)
        #expect(AirshipDate.parse("2028-02-29T00:00:00") != nil && AirshipDate.parse("2100-02-29T00:00:00") == nil)
        #expect(AirshipDate.parse("yesterday") == nil)
    }
}

@Suite struct UUIDTextTests {
    @Test func parsingMatchesFoundationAndRefusesWhatItRefuses() {
        for _ in 0..<100 {
            let id = UUID.random()
            #expect(UUID(parsing: id.uuidString) == id)
            #expect(UUID(parsing: id.lowercaseString) == id)
            #expect(id.lowercaseString == id.uuidString.lowercased())
        }
        for bad in ["", "not-a-uuid", "0b1e2c9a5d674e0ba2c41f3e5d7c9b11", "0b1e2c9a-5d67-4e0b-a2c4-1f3e5d7c9b1", "0b1e2c9a-5d67-4e0b-a2c4-1f3e5d7c9b111", "0b1e2c9a-5d67-4e0b-a2c4-1f3e5d7c9b1g"] {
            #expect(UUID(parsing: bad) == nil, "\(bad)")
        }
    }
}
