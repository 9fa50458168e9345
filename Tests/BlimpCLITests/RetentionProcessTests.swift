import BlimpCore
import BlimpTestSupport
import Foundation
import BlimpStore
import PostgresNIO
import Testing

/// Retention across real processes: a `blimp api` whose janitor runs every second deletes finished pushes past their
/// app's retention with their parts (backdated in SQL rather than waited for), keeps the young and the unfinished,
/// honours an app's own retention set with `blimp apps retention`, and answers a deleted push's id as expired and a
/// never-issued one as not found. Bad `BLIMP_RETENTION_*` values stop `blimp api` with the rule they break.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct RetentionProcessTests {
    @Test func theJanitorDeletesPushesPastTheirAppsRetention() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64(), "BLIMP_RETENTION_PUSHES": "24h"]
                let (scores, keyFile) = try await BlimpProcess.createScores(in: folder, environment: environment)
                let created = try await BlimpProcess.run(
                    [
                        "apps", "create", "--name", "Orders", "--bundle-id", "com.example.orders", "--apns-key-file", keyFile.path,
                        "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ", "--apns-environment", "sandbox",
                    ],
                    environment: environment)
                let orders = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String])
                let (scoresKey, ordersKey) = (try #require(scores["app_key"]), try #require(orders["app_key"]))
                let set = try await BlimpProcess.run(["apps", "retention", "--app-key", ordersKey, "--pushes", "48h"], environment: environment)
                #expect(set.status == 0 && set.stdout.contains("retention set"), "\(set.stderr)")
                let refused = try await BlimpProcess.run(["apps", "retention", "--app-key", ordersKey, "--pushes", "2h"], environment: environment)
                #expect(refused.status != 0 && refused.stderr.contains("below the floor of 24h"), "\(refused.stderr)")

                let ids = try await Self.appIDs(client)
                let (scoresID, ordersID) = (try #require(ids[scoresKey]), try #require(ids[ordersKey]))
                let now = Date()
                let aged = try await FinishedPushes.insert(3, appID: scoresID, finishedAt: now.addingTimeInterval(-30 * 3600), parts: 2, in: client)
                let young = try await FinishedPushes.insert(2, appID: scoresID, finishedAt: now.addingTimeInterval(-3600), parts: 2, in: client)
                try await FinishedPushes.insert(1, appID: scoresID, state: .sending, finishedAt: now.addingTimeInterval(-60 * 3600), in: client)
                try await FinishedPushes.insert(2, appID: ordersID, finishedAt: now.addingTimeInterval(-30 * 3600), in: client)
                let ordersAged = try await FinishedPushes.insert(1, appID: ordersID, state: .failed, finishedAt: now.addingTimeInterval(-50 * 3600), in: client)

                let port = freePort()
                let api = try BlimpProcess(["api", "--port", "\(port)", "--janitor-seconds", "1"], environment: environment)
                let base = "http://127.0.0.1:\(port)"
                try await waitUntilServing("\(base)/health")
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    let (scoresLeft, ordersLeft) = (try await FinishedPushes.counts(appID: scoresID, in: client), try await FinishedPushes.counts(appID: ordersID, in: client))
                    if scoresLeft.pushes <= 3 && ordersLeft.pushes <= 2 { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(try await FinishedPushes.counts(appID: scoresID, in: client) == (3, 5))
                #expect(try await FinishedPushes.counts(appID: ordersID, in: client) == (2, 2))

                let scoresAuth = "Basic " + Data("\(scoresKey):\(try #require(scores["master_secret"]))".utf8).base64EncodedString()
                let (goneStatus, gone) = try await AuditProcessTests.request(
                    "\(base)/api/pushes/\(aged[0].lowercaseString)", authorization: scoresAuth, appKey: nil)
                #expect(goneStatus == 404 && gone.contains("expired: reports are kept for 1d") && gone.contains("\"ok\":false"), "\(gone)")
                let (keptStatus, kept) = try await AuditProcessTests.request(
                    "\(base)/api/pushes/\(young[0].lowercaseString)", authorization: scoresAuth, appKey: nil)
                #expect(keptStatus == 200, "\(kept)")
                let (unknownStatus, unknown) = try await AuditProcessTests.request(
                    "\(base)/api/pushes/\(UUIDv7.make().lowercaseString)", authorization: scoresAuth, appKey: nil)
                #expect(unknownStatus == 404 && unknown.contains("Push not found") && !unknown.contains("expired"), "\(unknown)")
                let ordersAuth = "Basic " + Data("\(ordersKey):\(try #require(orders["master_secret"]))".utf8).base64EncodedString()
                let (_, ordersGone) = try await AuditProcessTests.request(
                    "\(base)/api/pushes/\(ordersAged[0].lowercaseString)/cancel", authorization: ordersAuth, appKey: nil, body: "")
                #expect(ordersGone.contains("expired: reports are kept for 2d"), "\(ordersGone)")

                api.signal(SIGTERM)
                let result = await api.wait()
                #expect(result.status == 0, "api exited \(result.status): \(result.stderr.suffix(3000))")
                #expect(result.stderr.contains("pushes past their retention deleted") || result.stdout.contains("pushes past their retention deleted"))
            }
        }
    }

    @Test(arguments: [
        ("BLIMP_RETENTION_PUSHES", "-1d", "is not a duration"), ("BLIMP_RETENTION_PUSHES", "0s", "must be more than 0"),
        ("BLIMP_RETENTION_AUDIT", "1e30s", "is not a duration"), ("BLIMP_RETENTION_PUSHES", "2h", "below the floor of 24h"),
        ("BLIMP_RETENTION_OUTCOMES", "abc", "is not a duration"), ("BLIMP_RETENTION_OUTCOMES", "30m", "below the floor of 1h"),
    ])
    func aBadRetentionStopsTheAPIWithTheRule(variable: String, value: String, rule: String) async throws {
        let result = try await BlimpProcess.run(
            ["api", "--port", "\(freePort())"],
            environment: ["DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64(), variable: value])
        #expect(result.status != 0)
        #expect(result.stderr.contains(variable) && result.stderr.contains("'\(value)'") && result.stderr.contains(rule), "\(result.stderr)")
    }

    /// Every app's id by its key.
    private static func appIDs(_ client: Database) async throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        for try await (key, id) in try await client.query("SELECT app_key, id FROM apps", logger: TestDatabase.logger).decode((String, Int64).self) {
            ids[key] = id
        }
        return ids
    }
}
