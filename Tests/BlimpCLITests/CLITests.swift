import AsyncHTTPClient
import BlimpAPNs
import BlimpCore
import BlimpStore
import BlimpTestSupport
import Crypto
import Foundation
import PostgresNIO
import Testing

/// The `blimp` executable end to end: real processes against a real PostgreSQL.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct CLITests {
    let serverKey = TestKeys.serverKeyBase64()

    @Test func migrateAppliesEachVersionOnceAndStatusListsThem() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { url, _ in
            let environment = ["DATABASE_URL": url]
            let pending = try await BlimpProcess.run(["migrate", "--status"], environment: environment)
            #expect(pending.status == 0, "\(pending.stderr)")
            let first = pending.stdout.split(separator: "\n").first ?? ""
            #expect(first.hasPrefix("1  baseline ") && first.hasSuffix("  pending"), "\(pending.stdout)")
            let migrated = try await BlimpProcess.run(["migrate"], environment: environment)
            #expect(migrated.status == 0, "\(migrated.stderr)")
            #expect(migrated.stdout.contains("to version \(Schema.latestVersion): applied 1 (baseline), 2 ("), "\(migrated.stdout)")
            let second = try await BlimpProcess.run(["migrate"], environment: environment)
            #expect(second.stdout.contains("applied none pending"), "\(second.stdout)")
            let status = try await BlimpProcess.run(["migrate", "--status"], environment: environment)
            let lines = status.stdout.split(separator: "\n")
            #expect(lines.count == Schema.latestVersion && lines.allSatisfy { $0.contains("  applied 20") }, "\(status.stdout)")
        }
    }

    @Test func appsCreatePrintsCredentialsAndItsKeyRoundTrips() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                // setup
                let privateKey = P256.Signing.PrivateKey()
                let keyFile = folder.appendingPathComponent("AuthKey_ABC123DEFG.p8")
                try privateKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": self.serverKey]
                // MUT
                let created = try await BlimpProcess.run(
                    [
                        "apps", "create", "--name", "Scores", "--bundle-id", "com.example.scores",
                        "--apns-key-file", keyFile.path, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ",
                        "--apns-environment", "sandbox",
                    ],
                    environment: environment
                )
                // validate: exactly one JSON object on stdout
                #expect(created.status == 0, "\(created.stderr)")
                let object = try #require(
                    try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String]
                )
                #expect(Set(object.keys) == ["app_key", "app_secret", "master_secret", "name", "bundle_id"])
                #expect(object["name"] == "Scores")
                #expect(object["bundle_id"] == "com.example.scores")
                for key in ["app_key", "app_secret", "master_secret"] {
                    #expect(object[key]!.wholeMatch(of: /[A-Za-z0-9_-]{22}/) != nil)
                }

                let listed = try await BlimpProcess.run(["apps", "list", "--json"], environment: environment)
                #expect(listed.status == 0)
                #expect(listed.stdout.contains(object["app_key"]!))
                #expect(!listed.stdout.contains(object["app_secret"]!))
                #expect(!listed.stdout.contains(object["master_secret"]!))
                let table = try await BlimpProcess.run(["apps", "list"], environment: environment)
                #expect(table.stdout.hasPrefix("NAME"))
                #expect(table.stdout.contains("Scores"))

                // The stored key decrypts with the server key and still signs for the same public key.
                let store = AppStore(client: client, logger: TestDatabase.logger)
                let app = try #require(try await store.find(appKey: object["app_key"]!))
                let key = try await store.delivery(appID: app.id, serverKey: try ServerKey(base64: self.serverKey)).key
                let signature = try key.privateKey.signature(for: Data("jwt".utf8))
                #expect(privateKey.publicKey.isValidSignature(signature, for: Data("jwt".utf8)))
                let stored = try await store.credentials(appKey: app.appKey, serverKey: try ServerKey(base64: self.serverKey))
                #expect(stored?.role(of: object["master_secret"]!) == .master)
                // The app secret is kept (sealed) and checks what the SDK signs with it.
                let signed = SDKSignature(appSecret: object["app_secret"]!).sign(["key", "nonce", "timestamp"])
                #expect(stored?.signature?.isValid(signed, parts: ["key", "nonce", "timestamp"]) == true)
            }
        }
    }

    struct BadInput: CustomStringConvertible, Sendable {
        let description: String
        let arguments: [String]
        let environment: [String: String]
        let message: String
    }

    /// Each mistake is one line on standard error, naming what is wrong, and a failing exit status.
    @Test func badInputIsOneClearLine() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let good = folder.appendingPathComponent("good.p8").path
                let p384 = folder.appendingPathComponent("p384.p8").path
                let text = folder.appendingPathComponent("notes.txt").path
                try TestKeys.p8().write(toFile: good, atomically: true, encoding: .utf8)
                try P384.Signing.PrivateKey().pemRepresentation.write(toFile: p384, atomically: true, encoding: .utf8)
                try "hello".write(toFile: text, atomically: true, encoding: .utf8)
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": self.serverKey]
                func create(_ overrides: [String: String]) -> [String] {
                    let flags = [
                        "--name": "App", "--bundle-id": "com.example.app", "--apns-key-file": good,
                        "--apns-key-id": "ABC123DEFG", "--apns-team-id": "DEF123GHIJ",
                    ].merging(overrides) { _, new in new }
                    return ["apps", "create"] + flags.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
                }
                let cases: [BadInput] = [
                    .init(description: "no DATABASE_URL", arguments: ["migrate"], environment: [:], message: "DATABASE_URL is not set"),
                    .init(description: "malformed DATABASE_URL", arguments: ["migrate"], environment: ["DATABASE_URL": "postgres://u:hunter2@/x"], message: "DATABASE_URL is not a valid PostgreSQL URL"),
                    .init(description: "unreachable database", arguments: ["migrate"], environment: ["DATABASE_URL": "postgres://blimp@127.0.0.1:1/blimp"], message: "cannot connect to the database postgres://blimp@127.0.0.1:1/blimp: connection refused"),
                    .init(description: "missing database", arguments: ["apps", "list"], environment: ["DATABASE_URL": url + "_missing"], message: "does not exist"),
                    .init(description: "unknown flag", arguments: ["migrate", "--colour"], environment: environment, message: "Unknown option '--colour'"),
                    .init(description: "unknown command", arguments: ["fly"], environment: environment, message: "Unexpected argument 'fly'"),
                    .init(description: "bad port", arguments: ["api", "--port", "http"], environment: environment, message: "The value 'http' is invalid for '--port <port>'"),
                    .init(description: "bad environment", arguments: create(["--apns-environment": "staging"]), environment: environment, message: "The value 'staging' is invalid for '--apns-environment"),
                    .init(description: "missing flag", arguments: ["apps", "create", "--name", "x"], environment: environment, message: "Missing expected argument"),
                    .init(description: "malformed bundle id", arguments: create(["--bundle-id": "my app"]), environment: environment, message: "the bundle id must be reverse-DNS"),
                    .init(description: "unreadable key file", arguments: create(["--apns-key-file": folder.appendingPathComponent("nope.p8").path]), environment: environment, message: "cannot read the APNs key file"),
                    .init(description: "not a key", arguments: create(["--apns-key-file": text]), environment: environment, message: "the APNs key is not a PEM private key"),
                    .init(description: "non-P-256 key", arguments: create(["--apns-key-file": p384]), environment: environment, message: "the APNs key is not a P-256 (ES256) private key"),
                    .init(description: "bad key id", arguments: create(["--apns-key-id": "abc"]), environment: environment, message: "the APNs key id must be Apple's 10-character id"),
                    .init(description: "no server key", arguments: create([:]), environment: ["DATABASE_URL": url], message: "BLIMP_SECRET_KEY is not set"),
                    .init(description: "api without server key", arguments: ["api"], environment: ["DATABASE_URL": url], message: "BLIMP_SECRET_KEY is not set"),
                    .init(description: "simulate-devices without secret", arguments: ["simulate-devices", "--app-key", "k"], environment: [:], message: "give --app-secret or set BLIMP_APP_SECRET"),
                    .init(description: "APNs URL not https", arguments: ["dev", "--state-dir", folder.appendingPathComponent("state").path], environment: ["DATABASE_URL": url, "BLIMP_APNS_URL": "http://127.0.0.1:2197"], message: "BLIMP_APNS_URL must be an https URL"),
                    .init(description: "APNs CA file missing", arguments: ["dev", "--state-dir", folder.appendingPathComponent("state").path], environment: ["DATABASE_URL": url, "BLIMP_APNS_CA_FILE": "/nonexistent/ca.pem"], message: "BLIMP_APNS_CA_FILE names a file that cannot be read: /nonexistent/ca.pem"),
                    .init(description: "malformed server key", arguments: create([:]), environment: ["DATABASE_URL": url, "BLIMP_SECRET_KEY": "short"], message: "BLIMP_SECRET_KEY must be 32 bytes in base64"),
                ]
                for bad in cases {
                    let result = try await BlimpProcess.run(bad.arguments, environment: bad.environment)
                    let lines = result.stderr.split(separator: "\n")
                    #expect(result.status != 0, "\(bad)")
                    #expect(lines.count == 1, "\(bad): \(result.stderr)")
                    #expect(result.stderr.hasPrefix("blimp: "), "\(bad): \(result.stderr)")
                    #expect(result.stderr.contains(bad.message), "\(bad): \(result.stderr)")
                    #expect(!result.stderr.contains("hunter2"), "\(bad)")
                    #expect(result.stdout.isEmpty, "\(bad): \(result.stdout)")
                }

                // A duplicate name: the first create works, the second is one line.
                #expect(try await BlimpProcess.run(create([:]), environment: environment).status == 0)
                let duplicate = try await BlimpProcess.run(create([:]), environment: environment)
                #expect(duplicate.status != 0)
                #expect(duplicate.stderr == "blimp: an app with this name already exists\n")
            }
        }
    }

    /// `api` serves health and the registry; `simulate-devices` registers devices through it as the SDK does, each
    /// with one tracked Live Activity; SIGTERM stops the API cleanly.
    @Test func simulatedDevicesRegisterThroughTheAPI() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": self.serverKey]
                let app = try await BlimpProcess.createScores(in: folder, environment: environment).credentials
                let port = freePort()
                let api = try BlimpProcess(["api", "--port", "\(port)"], environment: environment)
                try await waitUntilServing("http://127.0.0.1:\(port)/health")
                #expect(try await get("http://127.0.0.1:\(port)/ready") == (200, #"{"ok":true}"#))

                let simulated = try await BlimpProcess.run(
                    [
                        "simulate-devices", "--url", "http://127.0.0.1:\(port)", "--app-key", app["app_key"]!,
                        "--count", "20", "--concurrency", "4", "--activity-name", "match-7", "--lookup-rate", "50",
                    ],
                    environment: ["BLIMP_APP_SECRET": app["app_secret"]!, "BLIMP_MASTER_SECRET": app["master_secret"]!]
                )
                #expect(simulated.status == 0, "\(simulated.stderr)")
                #expect(simulated.stdout.hasPrefix("devices 20 in "), "\(simulated.stdout)")
                #expect(simulated.stdout.contains("PUT /api/channels/sdk/batch"))

                // Devices that sign their batches instead of fetching a token, paced.
                let signed = try await BlimpProcess.run(
                    [
                        "simulate-devices", "--url", "http://127.0.0.1:\(port)", "--app-key", app["app_key"]!,
                        "--count", "5", "--concurrency", "2", "--activity-name", "match-8", "--rate", "50",
                        "--no-channel-token",
                    ],
                    environment: ["BLIMP_APP_SECRET": app["app_secret"]!]
                )
                #expect(signed.status == 0, "\(signed.stderr)")
                #expect(!signed.stdout.contains("GET /api/auth/device"), "\(signed.stdout)")

                let stored = try await client.query(
                    "SELECT name, count(*)::int, count(DISTINCT channel_id)::int FROM live_activities WHERE state = 'active' GROUP BY name ORDER BY name",
                    logger: TestDatabase.logger
                )
                let counts = try await stored.decode((String, Int, Int).self).reduce(into: []) { $0.append($1) }
                #expect(counts.map(\.0) == ["match-7", "match-8"])
                #expect(counts.map(\.1) == [20, 5] && counts.map(\.2) == [20, 5])

                let stopping = ContinuousClock.now
                api.signal(SIGTERM)
                let result = await api.wait()
                #expect(result.status == 0, "\(result.stderr)")
                // At once: the janitor's minute between rounds ends at the signal too.
                #expect(ContinuousClock.now - stopping < .seconds(10))
            }
        }
    }

    /// `apps token create` issues a server API token; `push` sends by name with it (or the master secret), prints the
    /// push id, explains a refusal in one line, and with `--wait` follows the report until the push is done.
    @Test func pushSendsByNameAndFollowsTheReport() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": self.serverKey]
                let app = try await BlimpProcess.createScores(in: folder, environment: environment).credentials
                let appKey = app["app_key"]!
                let token = try await BlimpProcess.run(["apps", "token", "create", "--app-key", appKey, "--name", "ci"], environment: environment)
                #expect(token.status == 0, "\(token.stderr)")
                let bearer = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(APIToken.isWellFormed(bearer))
                let twice = try await BlimpProcess.run(["apps", "token", "create", "--app-key", appKey, "--name", "ci"], environment: environment)
                #expect(twice.status != 0 && twice.stderr == "blimp: an app with this token name already exists\n", "\(twice.stderr)")

                let port = freePort()
                let api = try BlimpProcess(["api", "--port", "\(port)"], environment: environment)
                try await waitUntilServing("http://127.0.0.1:\(port)/health")
                let target = ["--url", "http://127.0.0.1:\(port)", "--app-key", appKey]

                let update = try await BlimpProcess.run(
                    ["push"] + target + ["--token", bearer, "--name", "match-1", "--content-state", #"{"home": 1, "p": 0.941}"#, "--tag", "fans"])
                #expect(update.status == 0, "\(update.stderr)")
                let pushID = try #require(UUID(uuidString: update.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
                let stored = try await client.query(
                    "SELECT apns_body, audience::text FROM pushes WHERE push_id = \(pushID)", logger: TestDatabase.logger
                ).decode((String, String).self).reduce(into: []) { $0.append($1) }
                #expect(stored.first?.0.contains(#""content-state":{"home":1,"p":0.941}"#) == true, "\(stored)")
                #expect(stored.first?.1 == #"{"tag": "fans", "group": "device"}"#)

                let refused = try await BlimpProcess.run(["push"] + target + ["--token", bearer, "--name", "match-1"])
                #expect(refused.status != 0)
                #expect(refused.stderr.hasPrefix("blimp: the API answered 400: ") && refused.stderr.contains("content_state is required"), "\(refused.stderr)")

                // --wait follows the report; a worker's finishing is played here by the database.
                let waiting = try BlimpProcess(
                    ["push"] + target + ["--alert", "Doors open at 7", "--wait"], environment: ["BLIMP_MASTER_SECRET": app["master_secret"]!])
                var alertID: UUID?
                for _ in 0..<100 where alertID == nil {
                    try await Task.sleep(for: .milliseconds(100))
                    alertID = try await client.query("SELECT push_id FROM pushes WHERE kind = 'alert'", logger: TestDatabase.logger)
                        .decode(UUID.self).reduce(into: [UUID]()) { $0.append($1) }.first
                }
                let finished = try #require(alertID)
                try await Task.sleep(for: .milliseconds(700))
                try await client.query(
                    #"UPDATE pushes SET state = 'done', counts = '{"targets": 3, "sent": 3}' WHERE push_id = \#(finished)"#,
                    logger: TestDatabase.logger)
                let followed = await waiting.wait()
                #expect(followed.status == 0, "\(followed.stderr)")
                #expect(followed.stdout.hasPrefix(finished.uuidString.lowercased()), "\(followed.stdout)")
                #expect(followed.stderr.contains("queued: 0/0 sent") && followed.stderr.contains("done: 3/3 sent"), "\(followed.stderr)")

                let revoked = try await BlimpProcess.run(["apps", "token", "revoke", "--app-key", appKey, "--name", "ci"], environment: environment)
                #expect(revoked.stdout == "revoked ci\n")
                let again = try await BlimpProcess.run(["apps", "token", "revoke", "--app-key", appKey, "--name", "ci"], environment: environment)
                #expect(again.stderr == "blimp: the app has no token named ci\n")

                api.signal(SIGTERM)
                #expect(await api.wait().status == 0)
            }
        }
    }

    /// `dev` migrates, creates the demo app once, serves the API, and runs an APNs simulator that accepts pushes
    /// signed with the demo app's key.
    @Test func devMigratesCreatesTheDemoAppAndReusesIt() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { url, client in
            try await withTemporaryFolder { state in
                var firstKey: String?
                for run in 0..<2 {
                    let (port, simPort, simAdminPort) = (freePort(), freePort(), freePort())
                    let dev = try BlimpProcess(
                        [
                            "dev", "--state-dir", state.path, "--port", "\(port)",
                            "--apns-sim-port", "\(simPort)", "--apns-sim-admin-port", "\(simAdminPort)",
                        ],
                        environment: ["DATABASE_URL": url]
                    )
                    try await waitUntilServing("http://127.0.0.1:\(port)/health")
                    #expect(try await get("http://127.0.0.1:\(port)/ready") == (200, #"{"ok":true}"#))
                    #expect(try await self.demoKeyIsAccepted(state: state, simPort: simPort))
                    #expect(try await get("http://127.0.0.1:\(simAdminPort)/counters").1.contains(#""accepted":1"#))
                    dev.signal(SIGINT)
                    let result = await dev.wait()
                    #expect(result.status == 0, "\(result.stderr)")
                    // One line for the schema, however many versions the first run applied.
                    let schemaLines = result.stderr.split(separator: "\n").filter { $0.contains("schema ready") }
                    #expect(schemaLines.count == 1 && schemaLines[0].contains("version=\(Schema.latestVersion)"), "\(result.stderr)")
                    #expect(schemaLines.first?.contains("applied=\(run == 0 ? Schema.latestVersion : 0)") == true, "\(result.stderr)")
                    #expect(!result.stderr.contains("migration applied"), "\(result.stderr)")
                    #expect(result.stdout.contains("API            http://127.0.0.1:\(port)"))
                    #expect(result.stdout.contains("curl http://127.0.0.1:\(port)/ready"))
                    // The commands it suggests name the binary that runs, which need not be on PATH.
                    #expect(result.stdout.contains(" \(BlimpProcess.executable.path) push --url http://127.0.0.1:\(port) "))
                    #expect(result.stdout.contains("the simulator at https://127.0.0.1:\(simPort)"))
                    let appKey = try #require(result.stdout.firstMatch(of: /App key +([A-Za-z0-9_-]{22})/)).1
                    if run == 0 { firstKey = String(appKey) } else { #expect(String(appKey) == firstKey) }
                }
                let apps = try await AppStore(client: client, logger: TestDatabase.logger).list()
                #expect(apps.map(\.name) == ["demo"])
                let saved = try String(contentsOf: state.appendingPathComponent("demo-app.json"), encoding: .utf8)
                #expect(saved.contains(firstKey!))
                let permissions = try FileManager.default.attributesOfItem(atPath: state.appendingPathComponent("secret.key").path)[.posixPermissions] as? Int
                #expect(permissions == 0o600)
            }
        }
    }
}

extension CLITests {
    /// Sends one Live Activity update signed with the demo app's key to `dev`'s simulator.
    func demoKeyIsAccepted(state: URL, simPort: Int) async throws -> Bool {
        let endpoint = try APNsEndpointSettings(
            overrideURL: "https://127.0.0.1:\(simPort)",
            caFile: state.appendingPathComponent("apns-sim/ca.pem").path
        )
        let client = try APNsClient(configuration: APNsClientConfiguration(endpoint: endpoint), logger: TestDatabase.logger)
        let pem = try String(contentsOf: state.appendingPathComponent("AuthKey_DEMOKEY001.p8"), encoding: .utf8)
        let request = APNsRequest(
            deviceToken: DeviceToken(String(repeating: "ab", count: 32))!,
            pushType: .liveActivity,
            topic: APNsRequest.liveActivityTopic(bundleID: "com.example.blimp.demo"),
            payload: Array(#"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":1}}}"#.utf8)
        )
        let key = try APNsSigningKey(pem: pem, keyID: "DEMOKEY001", teamID: "DEMOTEAM01")
        let response = await client.send(request, key: key, environment: .sandbox)
        await client.shutdown()
        guard case .accepted = response else { return false }
        return true
    }
}

/// GETs `url`, returning the status and body.
func get(_ url: String) async throws -> (Int, String) {
    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
    let body = try await response.body.collect(upTo: 1 << 20)
    return (Int(response.status.code), String(buffer: body))
}

/// Polls `url` until it answers, for up to 30 seconds.
func waitUntilServing(_ url: String) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < deadline {
        if (try? await get(url)) != nil { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw CLIExpectationFailed("nothing answered at \(url)")
}

struct CLIExpectationFailed: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
