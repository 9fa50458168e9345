import BlimpCore
import BlimpSimulator
import Crypto
import Foundation
import Testing

/// Provider tokens as APNs checks them: structure, trusted key, team, signature, age.
@Suite struct ProviderTokenVerifierTests {
    /// A token built by hand from JSON texts, signed with `key`.
    static func handMadeJWT(header: String, claims: String, key: APNsSigningKey) throws -> String {
        let input = Data(header.utf8).base64URLEncodedString() + "." + Data(claims.utf8).base64URLEncodedString()
        let signature = try key.privateKey.signature(for: Data(input.utf8))
        return input + "." + signature.rawRepresentation.base64URLEncodedString()
    }

    func reason(of authorization: String, _ fixture: SimulatorFixture) throws -> String? {
        fixture.send(try fixture.request(["authorization": authorization])).reason?.rawValue
    }

    @Test func aTokenSignedByTheTrustedKeyIsAccepted() throws {
        let fixture = try SimulatorFixture()
        #expect(try self.reason(of: fixture.authorization(), fixture) == nil)
    }

    @Test func aTokenIssuedExactlyAnHourAgoIsStillAccepted() throws {
        let fixture = try SimulatorFixture()
        let authorization = try fixture.authorization(issuedAt: fixture.clock.now.addingTimeInterval(-3600))
        #expect(try self.reason(of: authorization, fixture) == nil)
    }

    @Test func aTokenOlderThanAnHourHasExpired() throws {
        let fixture = try SimulatorFixture()
        let authorization = try fixture.authorization(issuedAt: fixture.clock.now.addingTimeInterval(-3601))
        #expect(try self.reason(of: authorization, fixture) == "ExpiredProviderToken")
    }

    @Test func aTokenForAnotherTeamIsInvalid() throws {
        let fixture = try SimulatorFixture()
        let otherTeam = try APNsSigningKey(pem: fixture.key.pemRepresentation, keyID: fixture.key.keyID, teamID: "XYZ987WVUT")
        #expect(try self.reason(of: fixture.authorization(key: otherTeam), fixture) == "InvalidProviderToken")
    }

    @Test func aTokenFromAnUntrustedKeyIsInvalid() throws {
        let fixture = try SimulatorFixture()
        let untrusted = try SimulatorFixture.key(keyID: "QQQ123DEFG", teamID: fixture.key.teamID)
        #expect(try self.reason(of: fixture.authorization(key: untrusted), fixture) == "InvalidProviderToken")
    }

    @Test func aTokenSignedByAnotherKeyUnderTheTrustedIDIsInvalid() throws {
        let fixture = try SimulatorFixture()
        let impostor = try SimulatorFixture.key(keyID: fixture.key.keyID, teamID: fixture.key.teamID)
        #expect(try self.reason(of: fixture.authorization(key: impostor), fixture) == "InvalidProviderToken")
    }

    @Test func aTamperedSignatureIsInvalid() throws {
        let fixture = try SimulatorFixture()
        // A character well inside the signature: the last one also carries padding bits that decoding ignores.
        var characters = Array(try fixture.authorization())
        let index = characters.count - 10
        characters[index] = characters[index] == "A" ? "B" : "A"
        let authorization = String(characters)
        #expect(try self.reason(of: authorization, fixture) == "InvalidProviderToken")
    }

    @Test func tamperedClaimsAreInvalid() throws {
        let fixture = try SimulatorFixture()
        let parts = try fixture.authorization().dropFirst(7).split(separator: ".")
        let seconds = Int(fixture.clock.now.timeIntervalSince1970) + 1
        let claims = Data(#"{"iss":"\#(fixture.key.teamID)","iat":\#(seconds)}"#.utf8).base64URLEncodedString()
        #expect(try self.reason(of: "bearer \(parts[0]).\(claims).\(parts[2])", fixture) == "InvalidProviderToken")
    }

    @Test func aStringIssuedAtIsInvalid() throws {
        let fixture = try SimulatorFixture()
        let seconds = Int(fixture.clock.now.timeIntervalSince1970)
        let jwt = try Self.handMadeJWT(
            header: #"{"alg":"ES256","kid":"\#(fixture.key.keyID)"}"#,
            claims: #"{"iss":"\#(fixture.key.teamID)","iat":"\#(seconds)"}"#,
            key: fixture.key
        )
        #expect(try self.reason(of: "bearer \(jwt)", fixture) == "InvalidProviderToken")
        // The same token with a numeric iat passes, so only the string made the difference.
        let numeric = try Self.handMadeJWT(
            header: #"{"alg":"ES256","kid":"\#(fixture.key.keyID)","typ":"JWT"}"#,
            claims: #"{"iss":"\#(fixture.key.teamID)","iat":\#(seconds)}"#,
            key: fixture.key
        )
        #expect(try self.reason(of: "bearer \(numeric)", fixture) == nil)
    }

    @Test func anAlgorithmOtherThanES256IsInvalid() throws {
        let fixture = try SimulatorFixture()
        let jwt = try Self.handMadeJWT(
            header: #"{"alg":"HS256","kid":"\#(fixture.key.keyID)"}"#,
            claims: #"{"iss":"\#(fixture.key.teamID)","iat":\#(Int(fixture.clock.now.timeIntervalSince1970))}"#,
            key: fixture.key
        )
        #expect(try self.reason(of: "bearer \(jwt)", fixture) == "InvalidProviderToken")
    }

    @Test func aDERSignatureIsInvalid() throws {
        let fixture = try SimulatorFixture()
        let parts = try fixture.authorization().dropFirst(7).split(separator: ".")
        let input = Data("\(parts[0]).\(parts[1])".utf8)
        let der = try fixture.key.privateKey.signature(for: input).derRepresentation.base64URLEncodedString()
        #expect(try self.reason(of: "bearer \(parts[0]).\(parts[1]).\(der)", fixture) == "InvalidProviderToken")
    }

    @Test func aSchemeOtherThanBearerIsInvalid() throws {
        let fixture = try SimulatorFixture()
        let jwt = try fixture.authorization().dropFirst(7)
        #expect(try self.reason(of: "basic \(jwt)", fixture) == "InvalidProviderToken")
    }

    @Test func retrustingAKeyIDWithAnotherKeyInvalidatesTokensAlreadyVerified() throws {
        let fixture = try SimulatorFixture()
        let authorization = try fixture.authorization()
        #expect(try self.reason(of: authorization, fixture) == nil)
        let replacement = try SimulatorFixture.key(keyID: fixture.key.keyID, teamID: fixture.key.teamID)
        fixture.apns.trust(replacement)
        #expect(try self.reason(of: authorization, fixture) == "InvalidProviderToken")
        #expect(fixture.apns.trustedKeys == [fixture.key.keyID: fixture.key.teamID])
    }

    @Test func aKeyCanBeTrustedFromItsP8Text() throws {
        let fixture = try SimulatorFixture()
        let key = try SimulatorFixture.key(keyID: "P8P8P8P8P8", teamID: "TEAMTEAM12")
        try fixture.apns.trust(keyID: key.keyID, teamID: key.teamID, p8: key.pemRepresentation)
        #expect(try self.reason(of: fixture.authorization(key: key), fixture) == nil)
        #expect(throws: APNsSigningKeyError.notPEMPrivateKey) {
            try fixture.apns.trust(keyID: key.keyID, teamID: key.teamID, p8: "not a key")
        }
    }
}
