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
            _ = try await store.create(try self.newApp(pem: pem), credentials: credentials, serverKey: self.serverKey)

            let rows = try await client.query("SELECT row_to_json(apps)::text FROM apps", logger: TestDatabase.logger)
            for try await json in rows.decode(String.self) {
                #expect(!json.contains(credentials.appSecret))
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
                "\(error)".contains("does not open with this BLIMP_SECRET_KEY")
            }
        }
    }
}
