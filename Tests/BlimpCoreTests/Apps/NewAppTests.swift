import Crypto
import Testing

@testable import BlimpCore

@Suite struct NewAppTests {
    let key = try! APNsSigningKey(
        pem: P256.Signing.PrivateKey().pemRepresentation,
        keyID: "ABC123DEFG",
        teamID: "DEF123GHIJ"
    )

    @Test(arguments: ["com.example.app", "com.example.my-app", "io.blimp.Demo2", "a.b"])
    func acceptsBundleIDs(_ bundleID: String) throws {
        let app = try NewApp(name: "Demo", bundleID: bundleID, signingKey: self.key, environment: .sandbox)
        #expect(app.bundleID == bundleID)
    }

    @Test(arguments: [
        "", "app", "com..app", ".com.app", "com.app.", "com.exa mple.app", "com.example.app!", "com.exämple.app",
        "com.example_app.x", String(repeating: "a.", count: 80) + "a",
    ])
    func refusesMalformedBundleIDs(_ bundleID: String) {
        #expect(throws: NewAppError.invalidBundleID(bundleID)) {
            try NewApp(name: "Demo", bundleID: bundleID, signingKey: self.key, environment: .sandbox)
        }
    }

    @Test(arguments: ["", " Demo", "Demo ", "De\u{7}mo", String(repeating: "x", count: 101)])
    func refusesMalformedNames(_ name: String) {
        #expect(throws: NewAppError.invalidName(name)) {
            try NewApp(name: name, bundleID: "com.example.app", signingKey: self.key, environment: .sandbox)
        }
    }

    @Test func issuedCredentialsAreDistinctTokens() {
        let credentials = AppCredentials.issue()
        let all = [credentials.appKey, credentials.appSecret, credentials.masterSecret]
        #expect(all.allSatisfy(RandomToken.isWellFormed))
        #expect(Set(all).count == 3)
    }
}
