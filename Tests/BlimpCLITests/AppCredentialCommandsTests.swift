import BlimpCore
import BlimpStore
import BlimpTestSupport
import Crypto
import Foundation
import Testing

/// `blimp apps rotate-master-secret`, `rotate-app-secret`, `replace-apns-key` and `token list` as real processes.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct AppCredentialCommandsTests {
    let serverKey = TestKeys.serverKeyBase64()

    @Test func rotatingSecretsPrintsTheNewOnesOnceAndTheStoreTakesThem() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": self.serverKey]
                let app = try await BlimpProcess.createScores(in: folder, environment: environment).credentials
                let appKey = app["app_key"]!

                let master = try await BlimpProcess.run(["apps", "rotate-master-secret", "--app-key", appKey], environment: environment)
                #expect(master.status == 0, "\(master.stderr)")
                let masterSecret = master.stdout.trimmingCharacters(in: .newlines)
                #expect(RandomToken.isWellFormed(masterSecret), "\(master.stdout)")

                let rotated = try await BlimpProcess.run(
                    ["apps", "rotate-app-secret", "--app-key", appKey, "--overlap", "12h"], environment: environment)
                #expect(rotated.status == 0, "\(rotated.stderr)")
                let appSecret = rotated.stdout.trimmingCharacters(in: .newlines)
                #expect(RandomToken.isWellFormed(appSecret), "\(rotated.stdout)")
                #expect(rotated.stderr.hasPrefix("the previous app secret stays valid until about "), "\(rotated.stderr)")

                let store = AppStore(client: client, logger: TestDatabase.logger)
                let stored = try #require(try await store.credentials(appKey: appKey, serverKey: try ServerKey(base64: self.serverKey)))
                #expect(stored.role(of: masterSecret, at: Date()) == .master)
                #expect(stored.role(of: app["master_secret"]!, at: Date()) == nil)
                #expect(stored.role(of: appSecret, at: Date()) == .device)
                #expect(stored.role(of: app["app_secret"]!, at: Date()) == .device)
                let expiresAt = try #require(stored.previousAppSecretExpiresAt)
                #expect(abs(expiresAt.timeIntervalSinceNow - 12 * 3600) < 60)

                for (overlap, message) in [("7w", "The value '7w' is invalid for '--overlap <overlap>'"), ("91d", "must be 0 to 90 days")] {
                    let refused = try await BlimpProcess.run(
                        ["apps", "rotate-app-secret", "--app-key", appKey, "--overlap", overlap], environment: environment)
                    #expect(refused.status != 0 && refused.stdout.isEmpty, "\(refused.stdout)")
                    #expect(refused.stderr.hasPrefix("blimp: ") && refused.stderr.contains(message), "\(refused.stderr)")
                }
                let unknown = try await BlimpProcess.run(["apps", "rotate-master-secret", "--app-key", RandomToken.make()], environment: environment)
                #expect(unknown.stderr == "blimp: no such app\n")
            }
        }
    }

    @Test func replacingTheAPNsKeyAndListingTokens() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": self.serverKey]
                let appKey = try await BlimpProcess.createScores(in: folder, environment: environment).credentials["app_key"]!
                let privateKey = P256.Signing.PrivateKey()
                let keyFile = folder.appendingPathComponent("AuthKey_XYZ987KLMN.p8")
                try privateKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)

                let replaced = try await BlimpProcess.run(
                    [
                        "apps", "replace-apns-key", "--app-key", appKey, "--p8", keyFile.path, "--key-id", "XYZ987KLMN",
                        "--team-id", "TEAM654321", "--environment", "production",
                    ],
                    environment: environment
                )
                #expect(replaced.status == 0, "\(replaced.stderr)")
                #expect(replaced.stdout == "APNs key XYZ987KLMN of team TEAM654321, production\n")
                let store = AppStore(client: client, logger: TestDatabase.logger)
                let app = try #require(try await store.find(appKey: appKey))
                let key = try await store.delivery(appID: app.id, serverKey: try ServerKey(base64: self.serverKey)).key
                let message = Data("jwt".utf8)
                #expect(privateKey.publicKey.isValidSignature(try key.privateKey.signature(for: message), for: message))

                let none = try await BlimpProcess.run(["apps", "token", "list", "--app-key", appKey], environment: environment)
                #expect(none.status == 0 && none.stdout == "NAME  CREATED  ID\n", "\(none.stdout)\(none.stderr)")
                let token = try await BlimpProcess.run(["apps", "token", "create", "--app-key", appKey, "--name", "ci"], environment: environment)
                #expect(token.status == 0, "\(token.stderr)")
                let table = try await BlimpProcess.run(["apps", "token", "list", "--app-key", appKey], environment: environment)
                #expect(table.stdout.split(separator: "\n").last?.hasPrefix("ci    20") == true, "\(table.stdout)")
                let json = try await BlimpProcess.run(["apps", "token", "list", "--app-key", appKey, "--json"], environment: environment)
                let listed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: String]])
                #expect(listed.map { $0["name"] } == ["ci"] && listed.first?["created_at"] != nil, "\(json.stdout)")
                #expect(!json.stdout.contains(token.stdout.trimmingCharacters(in: .newlines)))
            }
        }
    }
}
