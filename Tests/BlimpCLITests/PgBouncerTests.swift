import AsyncHTTPClient
import BlimpTestSupport
import Foundation
import NIOCore
import BlimpStore
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Blimp through Debian's PgBouncer (1.18) in transaction mode, the mode that lets many API processes share a few
/// server connections (two here): `blimp migrate` refuses the pooler and migrates over `DATABASE_DIRECT_URL`; `blimp
/// api` names the `ALTER ROLE` statements that stand in for the startup parameters the pooler refuses, and a worker
/// without a direct URL says it only polls. With those run and the direct URL set, devices register (the multi-row
/// writes unnamed: a statement prepared on one server connection is not on the next), pushes reach `blimp apns-sim`
/// before the worker would have polled (it LISTENs on the direct URL), and a statement that outlives its request
/// is cancelled by the role's `statement_timeout`.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct PgBouncerTests {
    @Test func apiAndWorkerServeThroughPgBouncerInTransactionMode() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { direct, client in
            try await withTemporaryFolder { folder in
                let secretKey = TestKeys.serverKeyBase64()
                for name in ["first", "second"] {
                    try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
                }
                let first = try await PgBouncer.start(in: folder.appendingPathComponent("first"), for: direct, poolSize: 2)
                let pooledOnly = ["DATABASE_URL": first.url(for: direct), "BLIMP_SECRET_KEY": secretKey, "LOG_FORMAT": "json"]

                // blimp migrate holds an advisory lock across statements: only over a direct connection.
                let refused = try await BlimpProcess.run(["migrate"], environment: pooledOnly)
                #expect(refused.status == 1 && refused.stderr.contains("set DATABASE_DIRECT_URL"), "\(refused.stderr)")
                let pooledTwice = try await BlimpProcess.run(["migrate", "--database-direct-url", first.url(for: direct)], environment: pooledOnly)
                #expect(pooledTwice.status == 1 && pooledTwice.stderr.contains("must reach PostgreSQL itself"), "\(pooledTwice.stderr)")
                let migrated = try await BlimpProcess.run(["migrate"], environment: pooledOnly.merging(["DATABASE_DIRECT_URL": direct]) { $1 })
                #expect(migrated.status == 0, "\(migrated.stderr)")

                // Without the role's defaults the api names the statements to run; without a direct URL a worker polls.
                let port = freePort()
                let unready = try BlimpProcess(["api", "--port", "\(port)", "--request-timeout", "5"], environment: pooledOnly)
                let polling = try BlimpProcess(["worker"], environment: pooledOnly)
                try await waitUntilServing("http://127.0.0.1:\(port)/health")
                unready.signal()
                polling.signal()
                let (unreadyLog, pollingLog) = (await unready.wait().stderr, await polling.wait().stderr)
                let corrections = try #require(Self.entries(in: unreadyLog).compactMap { $0["sql"] as? String }.first, "\(unreadyLog)")
                let (user, database) = try Self.roleAndDatabase(of: direct)
                #expect(
                    corrections == "ALTER ROLE \"\(user)\" IN DATABASE \"\(database)\" SET jit = off; "
                        + "ALTER ROLE \"\(user)\" IN DATABASE \"\(database)\" SET statement_timeout = '5s'")
                #expect(unreadyLog.contains("the janitor's deletes run under the role's statement_timeout"))
                #expect(pollingLog.contains("no LISTEN, new pushes wait for the poll"), "\(pollingLog)")
                for statement in corrections.split(separator: "; ") {
                    try await client.query(PostgresQuery(unsafeSQL: String(statement)), logger: TestDatabase.logger)
                }
                // Server connections take the role's defaults when they start: a new PgBouncer opens new ones.
                await first.stop()
                let bouncer = try await PgBouncer.start(in: folder.appendingPathComponent("second"), for: direct, poolSize: 2)
                let environment = [
                    "DATABASE_URL": bouncer.url(for: direct), "DATABASE_DIRECT_URL": direct, "BLIMP_SECRET_KEY": secretKey, "LOG_FORMAT": "json",
                ]

                let (credentials, keyFile) = try await BlimpProcess.createScores(in: folder, environment: environment)
                let (appKey, appSecret, masterSecret) = try (
                    #require(credentials["app_key"]), #require(credentials["app_secret"]), #require(credentials["master_secret"]))
                let (simPort, adminPort) = (freePort(), freePort())
                let simulator = try BlimpProcess([
                    "apns-sim", "--port", "\(simPort)", "--admin-port", "\(adminPort)", "--state-dir", folder.appendingPathComponent("sim").path,
                    "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile.path)",
                ])
                try await waitUntilServing("http://127.0.0.1:\(adminPort)/counters")
                let api = try BlimpProcess(
                    ["api", "--port", "\(port)", "--request-timeout", "5", "--channel-creation-rate-limit-per-address", "0"], environment: environment)
                // It polls every 10 minutes: a push done sooner was announced by NOTIFY.
                let worker = try BlimpProcess(
                    ["worker", "--poll-seconds", "600"],
                    environment: environment.merging([
                        "BLIMP_APNS_URL": "https://127.0.0.1:\(simPort)", "BLIMP_APNS_CA_FILE": folder.appendingPathComponent("sim/ca.pem").path,
                    ]) { $1 })
                let base = "http://127.0.0.1:\(port)"
                try await waitUntilServing("\(base)/health")

                // 32 devices at once through two server connections: named statements would meet connections that
                // never prepared them.
                let devices = 200
                let registered = try await BlimpProcess.run(
                    ["simulate-devices", "--url", base, "--app-key", appKey, "--count", "\(devices)", "--concurrency", "32", "--activity-name", "final"],
                    environment: ["BLIMP_APP_SECRET": appSecret])
                #expect(registered.status == 0, "\(registered.stderr)")

                // Each push is delivered long before the poll would have found it: NOTIFY reached the worker.
                let body = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "final", "priority": 5, "content_state": {"n": 1}}}}}"#
                for _ in 0..<4 {
                    try await Task.sleep(for: .milliseconds(1300))
                    let (status, answer) = try await Self.request("\(base)/api/push", posting: body, appKey: appKey, secret: masterSecret)
                    #expect(status == 202, "\(answer)")
                    let reply = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
                    let pushID = try #require((reply?["push_ids"] as? [String])?.first.flatMap(UUID.init(uuidString:)))
                    try await Self.waitUntilDone(pushID, on: client)
                }
                let (_, counters) = try await get("http://127.0.0.1:\(adminPort)/counters")
                #expect((try JSONSerialization.jsonObject(with: Data(counters.utf8)) as? [String: Any])?["accepted"] as? Int == 4 * devices)

                // A lookup stuck behind a lock: the role's statement_timeout cancels it with its request.
                let channelID = try await client.query("SELECT channel_id FROM channels LIMIT 1", logger: TestDatabase.logger).decode(UUID.self).reduce(into: []) { $0.append($1) }[0]
                let (locked, lockedContinuation) = AsyncStream<Void>.makeStream()
                let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
                async let holder: Void = client.withTransaction(logger: TestDatabase.logger) { connection in
                    try await connection.query("LOCK TABLE channels IN ACCESS EXCLUSIVE MODE", logger: TestDatabase.logger)
                    lockedContinuation.yield()
                    for await _ in release { break }
                }
                for await _ in locked { break }
                async let lookup = Self.request("\(base)/api/channels/\(channelID.uuidString.lowercased())", appKey: appKey, secret: masterSecret)
                // Its statement waits for the lock until the role's timeout (5 s) from when it reaches PostgreSQL: with
                // 2 s, a run beside the whole suite on two cores once saw none waiting (a request late to reach it, or a
                // look late to see it). (The worker's poll may wait beside it: looking for released pushes reads
                // channels.)
                var waiting: [String] = []
                let deadline = ContinuousClock.now + .seconds(10)
                while waiting.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                    waiting = try await Self.lookupsWaitingForLocks(on: client)
                }
                #expect(waiting.count == 1, "\(waiting)")
                let (status, _) = try await lookup
                #expect(status == 503)
                try await Task.sleep(for: .milliseconds(300))
                let stillWaiting = try await Self.lookupsWaitingForLocks(on: client).filter { waiting.contains($0) }
                #expect(stillWaiting.isEmpty, "the lookup's statement outlived its request")
                releaseContinuation.yield()
                try await holder

                api.signal()
                worker.signal()
                simulator.signal()
                let (apiResult, workerResult) = (await api.wait(), await worker.wait())
                _ = await simulator.wait()
                await bouncer.stop()
                #expect(apiResult.status == 0 && workerResult.status == 0)
                #expect(!apiResult.stderr.contains("\"sql\""), "the api still found settings missing: \(apiResult.stderr)")
                #expect(!workerResult.stderr.contains("listening for pushes failed"), "\(workerResult.stderr)")
            }
        }
    }

    /// Waits until the push is done, for up to a minute (the worker's poll comes every ten).
    static func waitUntilDone(_ pushID: UUID, on client: Database) async throws {
        for _ in 0..<1200 {
            let rows = try await client.query(
                "SELECT 1 FROM pushes WHERE push_id = \(pushID) AND state = 'done'", logger: TestDatabase.logger
            ).decode(Int.self).reduce(into: []) { $0.append($1) }
            if !rows.isEmpty { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CLIExpectationFailed("push \(pushID) was not done within a minute")
    }

    /// The channel lookups (`ChannelRecords.fetch`, known by the start of their select list: `pg_stat_activity` keeps
    /// a statement's first kilobyte) of this database waiting for a lock, each as its process id and when it began.
    static func lookupsWaitingForLocks(on client: Database) async throws -> [String] {
        try await client.query(
            """
            SELECT pid || '@' || query_start FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'SELECT c.channel_id AS "channel_id", c.installed AS "installed"%'
            """,
            logger: TestDatabase.logger
        ).decode(String.self).reduce(into: []) { $0.append($1) }
    }

    /// A GET, or a POST of `body`, to the API with the app's key and `secret` (Basic), and its answer.
    static func request(_ url: String, posting body: String? = nil, appKey: String, secret: String) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(appKey):\(secret)".utf8).base64EncodedString())
        request.headers.add(name: "Accept", value: "application/vnd.urbanairship+json; version=3")
        if let body {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// The JSON log lines in `log`, as objects.
    static func entries(in log: String) -> [[String: Any]] {
        log.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The user and database `url` names.
    static func roleAndDatabase(of url: String) throws -> (String, String) {
        guard let components = URLComponents(string: url), let user = components.user else { throw CLIExpectationFailed("no user in \(url)") }
        return (user, String(components.path.dropFirst()))
    }
}
