import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--log-format json` (`LOG_FORMAT=json`) on a whole run of `blimp dev` at debug level: devices register, a push goes
/// out and is delivered; every line it logged is one JSON object, and none holds a device token or a secret.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct JSONLogTests {
    @Test func aWholeRunLogsJSONLinesWithoutTokensOrSecrets() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { url, client in
            try await withTemporaryFolder { state in
                let (port, simPort, simAdminPort) = (freePort(), freePort(), freePort())
                let dev = try BlimpProcess(
                    [
                        "dev", "--state-dir", state.path, "--port", "\(port)", "--apns-sim-port", "\(simPort)",
                        "--apns-sim-admin-port", "\(simAdminPort)", "--log-level", "debug",
                    ],
                    environment: ["DATABASE_URL": url, "LOG_FORMAT": "json"])
                let base = "http://127.0.0.1:\(port)"
                try await waitUntilServing("\(base)/health")
                let demo = try #require(
                    try JSONSerialization.jsonObject(with: Data(contentsOf: state.appendingPathComponent("demo-app.json"))) as? [String: Any])
                let (appKey, appSecret, masterSecret) = try (
                    #require(demo["app_key"] as? String), #require(demo["app_secret"] as? String), #require(demo["master_secret"] as? String))

                let devices = try await BlimpProcess.run(
                    ["simulate-devices", "--url", base, "--app-key", appKey, "--count", "20", "--activity-name", "final"],
                    environment: ["BLIMP_APP_SECRET": appSecret])
                #expect(devices.status == 0, "\(devices.stderr)")
                let push = try await BlimpProcess.run(
                    ["push", "--url", base, "--app-key", appKey, "--name", "final", "--content-state", #"{"home": 2}"#, "--wait"],
                    environment: ["BLIMP_MASTER_SECRET": masterSecret])
                #expect(push.status == 0, "\(push.stderr)")
                #expect(push.stdout.contains(#""sent":20"#), "\(push.stdout)")

                dev.signal(SIGINT)
                let result = await dev.wait()
                #expect(result.status == 0)
                var tokens: [String] = []
                for try await token in try await client.query(
                    "SELECT push_address FROM channels WHERE push_address IS NOT NULL UNION SELECT token FROM live_activities WHERE token IS NOT NULL",
                    logger: TestDatabase.logger
                ).decode(String.self) { tokens.append(token) }
                #expect(tokens.count == 40)
                let serverKey = try String(contentsOf: state.appendingPathComponent("secret.key"), encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)

                let lines = result.stderr.split(separator: "\n")
                #expect(lines.count > 20)
                var keys: Set<String> = []
                var requestLinesOfTheApp = 0
                for line in lines {
                    let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    #expect(entry?["time"] is String && entry?["level"] is String && entry?["message"] is String, "not a log entry: \(line)")
                    keys.formUnion(entry?.keys ?? [:].keys)
                    if entry?["hb.request.id"] != nil, entry?["app.key"] as? String == appKey { requestLinesOfTheApp += 1 }
                    for secret in [appSecret, masterSecret, serverKey] + tokens {
                        #expect(!line.contains(secret), "a secret or device token in: \(line)")
                    }
                }
                // Requests and pushes can be followed through the log.
                #expect(["hb.request.id", "push.id", "part", "app.key"].allSatisfy(keys.contains), "\(keys.sorted())")
                // The API's request lines name the app (the SDK's and the push command's requests).
                #expect(requestLinesOfTheApp > 40)
            }
        }
    }
}
