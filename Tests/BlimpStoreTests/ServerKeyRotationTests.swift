import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// `ServerKeyRotation` and `DeploymentSecrets` against real PostgreSQL: old key A, new key B.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct ServerKeyRotationTests {
    let a = ServerKey.generate()
    let b = ServerKey.generate()

    /// B with A as the previous key: every process during a rotation.
    var rotating: ServerKey { try! ServerKey(base64: self.b.base64, previousBase64: self.a.base64) }

    func rotation(_ client: Database, _ serverKey: ServerKey, batchSize: Int = 100) -> ServerKeyRotation {
        ServerKeyRotation(client: client, logger: TestDatabase.logger, serverKey: serverKey, batchSize: batchSize)
    }

    /// With no app yet, the oldest configured key gives the ids: the previous one during a rotation.
    @Test func theContactIDKeyIsStoredOnceFromTheKeyIdsCameFrom() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let secrets = DeploymentSecrets(client: client, logger: TestDatabase.logger)
            // Processes meeting on the deployment's first use, during a rotation, all get A's derivation.
            let keys = try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<8 { group.addTask { try await secrets.contactIDKey(serverKey: self.rotating).bytes } }
                return try await group.reduce(into: Set<Data>()) { $0.insert($1) }
            }
            #expect(keys == [ContactIDKey.derived(from: self.a.key).bytes])
            // Stored under B: B alone gives the same key; A alone cannot open it.
            #expect(try await secrets.contactIDKey(serverKey: self.b.key).bytes == ContactIDKey.derived(from: self.a.key).bytes)
            await #expect {
                _ = try await secrets.contactIDKey(serverKey: self.a.key)
            } throws: { error in
                "\(error)".hasPrefix("the deployment secret contact-ids cannot be read: it opens with neither BLIMP_SECRET_KEY")
            }
        }
        try await TestDatabase.withFreshDatabase { _, client in
            // Without a rotation, the ids came from the current key.
            let key = try await DeploymentSecrets(client: client, logger: TestDatabase.logger).contactIDKey(serverKey: self.b.key)
            #expect(key.bytes == ContactIDKey.derived(from: self.b.key).bytes)
        }
    }

    /// The key that sealed the apps' secrets is the one ids came from, whichever of the configured keys it is; a
    /// deployment started on B alone by mistake stores nothing rather than ids derived from B.
    @Test func theContactIDKeyComesFromTheKeyThatSealedTheApps() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let app = try await TestApps.create(named: "Scores", in: client, serverKey: self.a.key).app
            let secrets = DeploymentSecrets(client: client, logger: TestDatabase.logger)
            await #expect {
                _ = try await secrets.contactIDKey(serverKey: self.b.key)
            } throws: { error in
                "\(error)" == "the deployment secret contact-ids cannot be read: it is not stored yet, and the APNs key of app \(app.appKey) "
                    + "\(ServerKeyError.cannotOpen)"
            }
            #expect(try await client.query("SELECT count(*) FROM deployment_secrets", logger: TestDatabase.logger).decode(Int.self).array() == [0])
            // B with A as the previous key, and A alone, both find A.
            #expect(try await secrets.contactIDKey(serverKey: self.rotating).bytes == ContactIDKey.derived(from: self.a.key).bytes)
        }
        try await TestDatabase.withFreshDatabase { _, client in
            _ = try await TestApps.create(named: "Scores", in: client, serverKey: self.a.key)
            let key = try await DeploymentSecrets(client: client, logger: TestDatabase.logger).contactIDKey(serverKey: self.a.key)
            #expect(key.bytes == ContactIDKey.derived(from: self.a.key).bytes)
        }
    }

    @Test func rotatingSealsEverySecretUnderTheNewKeyBatchByBatchAndAgainDoesNothing() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            // setup: five apps under A, two in an app secret's overlap, and the contact-id key under A.
            let store = AppStore(client: client, logger: TestDatabase.logger)
            var apps: [App] = []
            for name in ["One", "Two", "Three", "Four", "Five"] {
                apps.append(try await TestApps.create(named: name, in: client, serverKey: self.a.key).app)
            }
            for app in apps.prefix(2) { _ = try await store.rotateAppSecret(appKey: app.appKey, overlap: 3600, serverKey: self.a.key) }
            let contactIDs = try await DeploymentSecrets(client: client, logger: TestDatabase.logger).contactIDKey(serverKey: self.a.key)
            let found = try await self.rotation(client, self.rotating).check()
            #expect(found.rows == ["apps": 5, "deployment_secrets": 1])
            #expect(found.previous == 5 * 2 + 2 + 1 && found.current == 0 && found.unopenable.isEmpty)
            // An app created during the rotation is sealed under B already.
            apps.append(try await TestApps.create(named: "Six", in: client, serverKey: self.rotating).app)

            // MUT: batches of two rows.
            let rotated = try await self.rotation(client, self.rotating, batchSize: 2).rotate()

            // validate
            #expect(rotated.previous == 13 && rotated.current == 2 && rotated.rows == ["apps": 6, "deployment_secrets": 1])
            let after = try await self.rotation(client, self.b.key).check()
            #expect(after.previous == 0 && after.current == 15 && after.unopenable.isEmpty)
            #expect(try await self.rotation(client, self.rotating).rotate().previous == 0)
            for app in apps {
                let credentials = try #require(try await store.credentials(appKey: app.appKey, serverKey: self.b.key))
                #expect(credentials.signature != nil)
                #expect((credentials.previousAppSecret?.signature != nil) == apps.prefix(2).contains(app))
                _ = try await store.delivery(appID: app.id, serverKey: self.b.key)
            }
            let kept = try await DeploymentSecrets(client: client, logger: TestDatabase.logger).contactIDKey(serverKey: self.b.key)
            #expect(kept.bytes == contactIDs.bytes)
        }
    }

    @Test func rotatingRefusesAndChangesNothingWhenASecretOpensWithNeitherKey() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let good = try await TestApps.create(named: "Good", in: client, serverKey: self.a.key).app
            let lost = try await TestApps.create(named: "Lost", in: client, serverKey: ServerKey.generate().key)
            // The check stores the contact-id key, as the API would; after it, nothing may change.
            let found = try await self.rotation(client, self.rotating).check()
            #expect(found.previous == 2 && found.unopenable == [.apnsKey(appKey: lost.app.appKey), .appSecret(appKey: lost.app.appKey)])
            let before = try await self.sealedColumns(client)

            await #expect {
                _ = try await self.rotation(client, self.rotating).rotate()
            } throws: { error in
                let text = "\(error)"
                return text.hasPrefix("the APNs key of app \(lost.app.appKey), the app secret of app \(lost.app.appKey) open with neither")
                    && !text.contains(good.appKey) && !text.contains(lost.credentials.appSecret)
                    && !text.contains(self.a.base64) && !text.contains(self.b.base64)
            }
            #expect(try await self.sealedColumns(client) == before)
            // With B alone, A's secrets open with neither key too.
            #expect(try await self.rotation(client, self.b.key).check().unopenable.count == 4)
        }
    }

    /// While the API reads credentials and an app secret is rotated on every app, a rotation in batches of one app
    /// leaves every secret readable throughout and all of them under B at the end.
    @Test func rotatingIsSafeWhileProcessesServe() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            var created: [App] = []
            for index in 0..<20 { created.append(try await TestApps.create(named: "App\(index)", in: client, serverKey: self.a.key).app) }
            let apps = created
            let rotation = self.rotation(client, self.rotating, batchSize: 1)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { _ = try await rotation.rotate() }
                group.addTask {
                    for app in apps {
                        _ = try await store.rotateAppSecret(appKey: app.appKey, overlap: 60, serverKey: self.rotating)
                        for other in apps { #expect(try await store.credentials(appKey: other.appKey, serverKey: self.rotating) != nil) }
                    }
                }
                try await group.waitForAll()
            }
            let after = try await self.rotation(client, self.b.key).check()
            #expect(after.unopenable.isEmpty && after.previous == 0 && after.current == 20 * 3 + 1)
        }
    }

    /// Every sealed value in the database, to see that nothing changed.
    func sealedColumns(_ client: Database) async throws -> [Data?] {
        try await client.query(
            """
            SELECT v FROM (SELECT app_key AS k, 1 AS o, apns_key_sealed AS v FROM apps UNION ALL
                           SELECT app_key, 2, app_secret_sealed FROM apps UNION ALL
                           SELECT app_key, 3, previous_app_secret_sealed FROM apps UNION ALL
                           SELECT name, 4, sealed FROM deployment_secrets) s ORDER BY k, o
            """,
            logger: TestDatabase.logger
        ).decode(Data?.self).array()
    }
}
