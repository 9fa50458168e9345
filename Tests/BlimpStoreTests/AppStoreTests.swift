import BlimpCore
import BlimpTestSupport
import Crypto
import Foundation
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct AppStoreTests {
    let serverKey = ServerKey.generate().key

    func newApp(name: String = "Demo", pem: String = TestKeys.p8()) throws -> NewApp {
        try NewApp(
            name: name,
            bundleID: "com.example.demo",
            signingKey: APNsSigningKey(pem: pem, keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
            environment: .sandbox
        )
    }

    /// Expects `body` to fail because the app does not exist.
    static func expectNoSuchApp(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected no such app", sourceLocation: sourceLocation)
        } catch {
            #expect("\(error)" == "no such app", sourceLocation: sourceLocation)
        }
    }

    @Test func createdAppRoundTripsAndItsKeyStillSigns() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            // setup
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let privateKey = P256.Signing.PrivateKey()
            let credentials = AppCredentials.issue()
            // MUT
            let created = try await store.create(
                try self.newApp(pem: privateKey.pemRepresentation),
                credentials: credentials,
                serverKey: self.serverKey
            )
            // validate
            #expect(created.appKey == credentials.appKey)
            #expect(created.name == "Demo")
            #expect(created.apnsEnvironment == .sandbox)
            #expect(try await store.find(appKey: credentials.appKey) == created)
            #expect(try await store.list() == [created])

            let (app, key, _) = try await store.delivery(appID: created.id, serverKey: self.serverKey)
            #expect(app == created)
            let message = Data("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJERUYxMjNHSElKIn0".utf8)
            let signature = try key.privateKey.signature(for: message)
            #expect(privateKey.publicKey.isValidSignature(signature, for: message))
        }
    }

    @Test func secretsAreStoredAsDigestsOnly() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let pem = TestKeys.p8()
            let credentials = AppCredentials.issue()
            let app = try await store.create(try self.newApp(pem: pem), credentials: credentials, serverKey: self.serverKey)
            // A rotated app secret is kept the same way while its overlap lasts.
            let rotated = try await store.rotateAppSecret(appKey: app.appKey, overlap: 3600, serverKey: self.serverKey)

            let rows = try await client.query("SELECT row_to_json(apps)::text FROM apps", logger: TestDatabase.logger)
            for try await json in rows.decode(String.self) {
                #expect(!json.contains(credentials.appSecret))
                #expect(!json.contains(rotated))
                #expect(!json.contains(credentials.masterSecret))
                #expect(!json.contains("PRIVATE KEY"))
            }
        }
    }

    @Test func authenticatesEachSecretWithItsRole() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let credentials = AppCredentials.issue()
            let app = try await store.create(try self.newApp(), credentials: credentials, serverKey: self.serverKey)

            let stored = try #require(try await store.credentials(appKey: app.appKey, serverKey: self.serverKey))
            #expect(stored.app == app)
            let signed = SDKSignature(appSecret: credentials.appSecret).sign([app.appKey, "nonce", "timestamp"])
            #expect(stored.signature?.isValid(signed, parts: [app.appKey, "nonce", "timestamp"]) == true)
            #expect(stored.role(of: credentials.masterSecret) == .master)
            #expect(stored.role(of: credentials.appSecret) == .device)
            #expect(stored.role(of: "wrong") == nil)
            #expect(try await store.credentials(appKey: "unknown", serverKey: self.serverKey) == nil)
        }
    }

    @Test func duplicateNamesAreRefused() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            _ = try await store.create(try self.newApp(), credentials: .issue(), serverKey: self.serverKey)
            await #expect {
                _ = try await store.create(try self.newApp(), credentials: .issue(), serverKey: self.serverKey)
            } throws: { error in
                "\(error)" == "an app with this name already exists"
            }
            #expect(try await store.list().count == 1)
        }
    }

    @Test func anotherServerKeyCannotOpenTheAPNsKey() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let app = try await store.create(try self.newApp(), credentials: .issue(), serverKey: self.serverKey)
            await #expect {
                _ = try await store.delivery(appID: app.id, serverKey: ServerKey.generate().key)
            } throws: { error in
                "\(error)".hasPrefix("the APNs key of app \(app.appKey) cannot be read: it opens with neither BLIMP_SECRET_KEY nor BLIMP_PREVIOUS_SECRET_KEY")
            }
        }
    }

    @Test func aRotatedMasterSecretIsRefusedAndTheNewOnePasses() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let credentials = AppCredentials.issue()
            let app = try await store.create(try self.newApp(), credentials: credentials, serverKey: self.serverKey)

            let secret = try await store.rotateMasterSecret(appKey: app.appKey)

            #expect(RandomToken.isWellFormed(secret) && secret != credentials.masterSecret)
            let stored = try #require(try await store.credentials(appKey: app.appKey, serverKey: self.serverKey))
            #expect(stored.role(of: credentials.masterSecret, at: Date()) == nil)
            #expect(stored.role(of: secret, at: Date()) == .master)
            #expect(stored.role(of: credentials.appSecret, at: Date()) == .device)
            await Self.expectNoSuchApp { _ = try await store.rotateMasterSecret(appKey: RandomToken.make()) }
        }
    }

    @Test func thePreviousAppSecretPassesBasicAndSignaturesUntilItsOverlapEnds() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let credentials = AppCredentials.issue()
            let app = try await store.create(try self.newApp(), credentials: credentials, serverKey: self.serverKey)
            let parts = [app.appKey, "nonce", "timestamp"]
            let signedWithOld = SDKSignature(appSecret: credentials.appSecret).sign(parts)

            let secret = try await store.rotateAppSecret(appKey: app.appKey, overlap: 3600, serverKey: self.serverKey)

            let stored = try #require(try await store.credentials(appKey: app.appKey, serverKey: self.serverKey))
            let expiresAt = try #require(stored.previousAppSecretExpiresAt)
            #expect(abs(expiresAt.timeIntervalSinceNow - 3600) < 60)
            let signedWithNew = SDKSignature(appSecret: secret).sign(parts)
            let during = expiresAt.addingTimeInterval(-1)
            #expect(stored.role(of: credentials.appSecret, at: during) == .device)
            #expect(stored.role(of: secret, at: during) == .device)
            #expect(stored.signatures(at: during).contains { $0.isValid(signedWithOld, parts: parts) })
            #expect(stored.signatures(at: during).contains { $0.isValid(signedWithNew, parts: parts) })
            // At the end of the overlap, only the new secret passes.
            #expect(stored.role(of: credentials.appSecret, at: expiresAt) == nil)
            #expect(!stored.signatures(at: expiresAt).contains { $0.isValid(signedWithOld, parts: parts) })
            #expect(stored.role(of: secret, at: expiresAt) == .device)
            #expect(stored.signatures(at: expiresAt).contains { $0.isValid(signedWithNew, parts: parts) })
            #expect(stored.role(of: credentials.masterSecret, at: expiresAt) == .master)
        }
    }

    @Test func rotatingTheAppSecretAgainOrWithoutOverlapDropsThePreviousOne() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let credentials = AppCredentials.issue()
            let app = try await store.create(try self.newApp(), credentials: credentials, serverKey: self.serverKey)

            // Only one previous secret is kept: the second rotation's.
            let second = try await store.rotateAppSecret(appKey: app.appKey, overlap: 86400, serverKey: self.serverKey)
            let third = try await store.rotateAppSecret(appKey: app.appKey, overlap: 86400, serverKey: self.serverKey)
            var stored = try #require(try await store.credentials(appKey: app.appKey, serverKey: self.serverKey))
            #expect(stored.role(of: credentials.appSecret, at: Date()) == nil)
            #expect(stored.role(of: second, at: Date()) == .device)
            #expect(stored.role(of: third, at: Date()) == .device)
            #expect(stored.signatures(at: Date()).count == 2)

            // An overlap of 0 refuses the previous secret at once.
            let fourth = try await store.rotateAppSecret(appKey: app.appKey, overlap: 0, serverKey: self.serverKey)
            stored = try #require(try await store.credentials(appKey: app.appKey, serverKey: self.serverKey))
            #expect(stored.previousAppSecretExpiresAt == nil)
            #expect(stored.role(of: third, at: Date()) == nil)
            #expect(stored.role(of: fourth, at: Date()) == .device)
            #expect(stored.signatures(at: Date()).count == 1)
        }
    }

    @Test func anAppSecretOverlapOutsideZeroToNinetyDaysIsRefused() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let credentials = AppCredentials.issue()
            let app = try await store.create(try self.newApp(), credentials: credentials, serverKey: self.serverKey)
            for overlap in [-1, AppStore.maximumAppSecretOverlap + 1, .infinity, .nan] {
                await #expect {
                    _ = try await store.rotateAppSecret(appKey: app.appKey, overlap: overlap, serverKey: self.serverKey)
                } throws: { error in
                    "\(error)".hasPrefix("the previous app secret's overlap must be 0 to 90 days")
                }
            }
            let stored = try #require(try await store.credentials(appKey: app.appKey, serverKey: self.serverKey))
            #expect(stored.role(of: credentials.appSecret, at: Date()) == .device)
            await Self.expectNoSuchApp { _ = try await store.rotateAppSecret(appKey: RandomToken.make(), overlap: 60, serverKey: self.serverKey) }
        }
    }

    @Test func replacingTheAPNsKeyChangesWhatDeliveryReturns() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let app = try await store.create(try self.newApp(), credentials: .issue(), serverKey: self.serverKey)
            let replacement = P256.Signing.PrivateKey()
            let key = try APNsSigningKey(pem: replacement.pemRepresentation, keyID: "XYZ987KLMN", teamID: "TEAM654321")

            let replaced = try await store.replaceAPNsKey(appKey: app.appKey, signingKey: key, environment: .production, serverKey: self.serverKey)

            #expect(replaced.apnsKeyID == "XYZ987KLMN" && replaced.apnsTeamID == "TEAM654321" && replaced.apnsEnvironment == .production)
            #expect(replaced.id == app.id && replaced.bundleID == app.bundleID)
            let (delivered, deliveredKey, _) = try await store.delivery(appID: app.id, serverKey: self.serverKey)
            #expect(delivered == replaced)
            #expect((deliveredKey.keyID, deliveredKey.teamID) == ("XYZ987KLMN", "TEAM654321"))
            let message = Data("provider token".utf8)
            #expect(replacement.publicKey.isValidSignature(try deliveredKey.privateKey.signature(for: message), for: message))

            // Without an environment, the app keeps its own.
            _ = try await store.replaceAPNsKey(appKey: app.appKey, signingKey: try self.newApp().signingKey, serverKey: self.serverKey)
            #expect(try await store.delivery(appID: app.id, serverKey: self.serverKey).app.apnsEnvironment == .production)
            await Self.expectNoSuchApp { _ = try await store.replaceAPNsKey(appKey: RandomToken.make(), signingKey: key, serverKey: self.serverKey) }
        }
    }

    @Test func tokensAreListedByNameOldestFirstWithoutTheTokens() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let app = try await store.create(try self.newApp(), credentials: .issue(), serverKey: self.serverKey)
            let other = try await store.create(try self.newApp(name: "Other"), credentials: .issue(), serverKey: self.serverKey)
            #expect(try await store.tokens(appKey: app.appKey) == [])

            let ci = try await store.createToken(appKey: app.appKey, name: "ci")
            _ = try await store.createToken(appKey: app.appKey, name: "backend")
            _ = try await store.createToken(appKey: other.appKey, name: "elsewhere")

            let tokens = try await store.tokens(appKey: app.appKey)
            #expect(tokens.map(\.name) == ["ci", "backend"])
            #expect(tokens.allSatisfy { abs($0.createdAt.timeIntervalSinceNow) < 60 })
            #expect(!"\(tokens)".contains(ci))
            #expect(try await store.revokeToken(appKey: app.appKey, name: "ci"))
            #expect(try await store.tokens(appKey: app.appKey).map(\.name) == ["backend"])
            await Self.expectNoSuchApp { _ = try await store.tokens(appKey: RandomToken.make()) }
        }
    }
}
