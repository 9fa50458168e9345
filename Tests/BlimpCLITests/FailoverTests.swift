import AsyncHTTPClient
import BlimpTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL failover under load, with `blimp api`, two `blimp worker`s and `blimp apns-sim` as real processes on a
/// `DATABASE_URL` naming a primary and its synchronous standby: the primary crashes (an immediate shutdown) and the
/// standby is promoted, as a failover manager does. No process is restarted; the clients retry each 503 (a push with
/// its `Idempotency-Key`). Every push answered 202 is delivered, each token sent a push once beyond the batches in
/// flight, and every registration answered is on the new primary.
@Suite(.enabled(if: TestDatabase.isEnabled), .serialized) struct FailoverTests {
    static let perUserActivities = 200
    static let fanOutTokens = 20_000
    static let batchSize = 100

    @Test func aFailoverLosesNothingAccepted() async throws {
        try await withTemporaryFolder { folder in
            let deployment = try await FailoverDeployment.start(in: folder)
            try await withCleanup {
                let load = deployment.load
                let senders = Task { try await load.run(pushers: 3, registrars: 1) }
                try await load.waitForAccepted(20)

                // A 20,000-token fan-out, its parts under way when the primary crashes.
                let fanOut = Task { try await load.push(audience: #""all""#, name: "big", value: 1) }
                let firstFanOutID = try await load.waitForFanOut()
                for _ in 0..<600 {
                    let sent = try await deployment.primary.query("SELECT count(*) FROM delivery_outcomes WHERE push_id = '\(firstFanOutID)'")
                    if let count = Int(sent.first ?? ""), count >= 1_000 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let acceptedBefore = load.acceptedCount
                await deployment.primary.crash()
                try await Task.sleep(for: .seconds(1))  // a failover manager's detection
                try await deployment.standby.promote()
                let promoted = ContinuousClock.now

                // Until the API has answered 202 again, and a hundred more since (at most two minutes: a busy machine).
                try await load.waitForAccepted(after: promoted, 100, within: .seconds(120))
                load.stop()
                try await senders.value
                let fanOutID = try await fanOut.value
                #expect(fanOutID == firstFanOutID)
                let firstAfter = load.firstAcceptance(after: promoted)
                let statuses = load.statuses.withLock { $0 }
                print("failover: \(acceptedBefore) pushes accepted before the crash, \(load.acceptedCount - acceptedBefore) after;",
                    "first 202 \(firstAfter.map { "\($0)" } ?? "never") after the promotion; answers \(statuses)")
                #expect(firstAfter.map { $0 < .seconds(30) } == true)
                #expect(statuses.keys.allSatisfy { [200, 201, 202, 503].contains($0) }, "\(statuses)")
                #expect((statuses[503] ?? 0) > 0, "nothing was refused during the failover: \(statuses)")

                let newPrimary = deployment.standby
                try await deployment.expectEverythingDelivered(on: newPrimary, fanOut: fanOutID)
                let channels = load.registered.withLock { $0 }
                try await deployment.table("registered", of: channels, on: newPrimary)
                let found = try await newPrimary.query("SELECT count(*) FROM channels WHERE channel_id IN (SELECT id FROM registered)")
                #expect(!channels.isEmpty && found == ["\(channels.count)"], "\(channels.count) registrations answered, \(found) on the new primary")
                try await deployment.expectCleanExits()
            } cleanup: {
                await deployment.stop()
            }
        }
    }

    /// After the failover, the old primary comes back as a standby of the new one (a fresh base backup, on its old port,
    /// first in `DATABASE_URL`): Blimp writes nothing to it. Every push is answered 202 on the first try (a write sent
    /// to the standby would be refused as read-only, a 503), including through an api started anew and a worker
    /// killed and started anew, which find the new primary although the standby answers first.
    @Test func aFormerPrimaryBackAsAStandbyIsNeverWrittenTo() async throws {
        try await withTemporaryFolder { folder in
            let deployment = try await FailoverDeployment.start(in: folder)
            try await withCleanup {
                await deployment.primary.crash()
                try await deployment.standby.promote()
                let load = deployment.load
                let senders = Task { try await load.run(pushers: 2, registrars: 1) }
                try await load.waitForAccepted(after: .now, 20, within: .seconds(120))

                let former = try await PostgresServer.standby(of: deployment.standby, in: deployment.primary.folder, port: deployment.primary.port)
                try await withCleanup {
                    #expect(try await former.isStandby)
                    let refusedBefore = load.statuses.withLock { $0[503] ?? 0 }
                    try await deployment.restartAPI()
                    try await deployment.restartWorker(0)
                    try await load.waitForAccepted(after: .now, 100, within: .seconds(120))
                    load.stop()
                    try await senders.value

                    let statuses = load.statuses.withLock { $0 }
                    print("former primary back as a standby: \(load.acceptedCount) pushes accepted; answers \(statuses)")
                    // The api's restart refuses connections for a moment (answers 0), never with a 503.
                    #expect(statuses[503] ?? 0 == refusedBefore, "\(statuses)")
                    #expect(statuses.keys.allSatisfy { [0, 200, 201, 202, 503].contains($0) }, "\(statuses)")
                    try await deployment.expectEverythingDelivered(on: deployment.standby, fanOut: nil)
                    try await deployment.standby.waitForStandbyToCatchUp()
                    let counts = "SELECT (SELECT count(*) FROM pushes) || ' ' || (SELECT count(*) FROM channels)"
                    #expect(try await former.query(counts) == (try await deployment.standby.query(counts)))
                    #expect(try await former.isStandby)
                    try await deployment.expectCleanExits()
                } cleanup: {
                    await former.stop()
                }
            } cleanup: {
                await deployment.stop()
            }
        }
    }
}

/// A primary and its synchronous standby, `blimp apns-sim`, `blimp api` and two `blimp worker`s on a `DATABASE_URL`
/// naming both servers, with channels and live activities to push to, and a ``RetryingLoad`` on the API.
final class FailoverDeployment: @unchecked Sendable {
    let folder: URL
    let primary: PostgresServer
    let standby: PostgresServer
    let environment: [String: String]
    let workerEnvironment: [String: String]
    let simulatorAdminPort: Int
    let apiPort = freePort()
    let simulator: BlimpProcess
    private(set) var api: BlimpProcess
    private(set) var workers: [BlimpProcess]
    let load: RetryingLoad

    static func start(in folder: URL) async throws -> FailoverDeployment {
        let primary = try await PostgresServer.start(in: folder)
        let standby = try await PostgresServer.standby(of: primary, in: folder.appendingPathComponent("standby"))
        try await primary.requireSynchronousStandby()
        // `connect_timeout=2`: how long each host may take to accept a connection, as in libpq.
        let url = "postgres://blimp@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/blimp?connect_timeout=2"
        let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
        let migrated = try await BlimpProcess.run(["migrate"], environment: environment)
        guard migrated.status == 0 else { throw CLIExpectationFailed("migrate failed: \(migrated.stderr)") }
        let (credentials, keyFile) = try await BlimpProcess.createScores(in: folder, environment: environment)
        _ = try await primary.query(
            """
            INSERT INTO channels (app_id, channel_id, opt_in)
                SELECT 1, md5('c' || i)::uuid, true FROM generate_series(1, \(FailoverTests.perUserActivities + FailoverTests.fanOutTokens)) i;
            INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
                SELECT 1, md5('c' || i)::uuid, CASE WHEN i <= \(FailoverTests.perUserActivities) THEN 'n' || (i % 10) ELSE 'big' END,
                       'a' || i, md5('t' || i) || md5('u' || i), 'active', now(), 1
                FROM generate_series(1, \(FailoverTests.perUserActivities + FailoverTests.fanOutTokens)) i;
            """)
        let activities = try await primary.query("SELECT name || ' ' || channel_id FROM live_activities WHERE name <> 'big' ORDER BY channel_id")
            .map { line in line.split(separator: " ").map(String.init) }.map { (name: $0[0], channel: $0[1]) }
        return try await FailoverDeployment(
            folder: folder, primary: primary, standby: standby, environment: environment, credentials: credentials, keyFile: keyFile,
            activities: activities)
    }

    private init(
        folder: URL, primary: PostgresServer, standby: PostgresServer, environment: [String: String], credentials: [String: String],
        keyFile: URL, activities: [(name: String, channel: String)]
    ) async throws {
        (self.folder, self.primary, self.standby, self.environment) = (folder, primary, standby, environment)
        let simPort = freePort()
        self.simulatorAdminPort = freePort()
        self.simulator = try BlimpProcess(
            ["apns-sim", "--port", "\(simPort)", "--admin-port", "\(self.simulatorAdminPort)", "--state-dir", folder.appendingPathComponent("sim").path,
             "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile.path)", "--latency-ms", "5"])
        try await waitUntilServing("http://127.0.0.1:\(self.simulatorAdminPort)/counters")
        var workerEnvironment = environment
        workerEnvironment["BLIMP_APNS_URL"] = "https://127.0.0.1:\(simPort)"
        workerEnvironment["BLIMP_APNS_CA_FILE"] = folder.appendingPathComponent("sim/ca.pem").path
        self.workerEnvironment = workerEnvironment
        self.api = try Self.api(port: self.apiPort, environment: environment)
        self.workers = try (0..<2).map { try Self.worker($0, environment: workerEnvironment) }
        try await waitUntilServing("http://127.0.0.1:\(self.apiPort)/health")
        self.load = RetryingLoad(api: "http://127.0.0.1:\(self.apiPort)", credentials: credentials, activities: activities)
    }

    private static func api(port: Int, environment: [String: String]) throws -> BlimpProcess {
        try BlimpProcess(
            ["api", "--port", "\(port)", "--push-rate-limit", "0", "--server-rate-limit", "0", "--channel-creation-rate-limit", "0",
             "--channel-creation-rate-limit-per-address", "0"], environment: environment)
    }

    private static func worker(_ index: Int, environment: [String: String]) throws -> BlimpProcess {
        try BlimpProcess(
            ["worker", "--batch-size", "\(FailoverTests.batchSize)", "--lease-seconds", "5", "--name", "w\(index)"], environment: environment)
    }

    /// Stops the api (SIGTERM, waiting for its exit) and starts another on the same port.
    func restartAPI() async throws {
        self.api.signal(SIGTERM)
        let exited = await self.api.wait()
        #expect(exited.status == 0, "the api exited \(exited.status): \(exited.stderr.suffix(3000))")
        self.api = try Self.api(port: self.apiPort, environment: self.environment)
        try await waitUntilServing("http://127.0.0.1:\(self.apiPort)/health")
    }

    /// Kills worker `index` (SIGKILL, waiting for its exit) and starts another in its place.
    func restartWorker(_ index: Int) async throws {
        self.workers[index].signal(SIGKILL)
        _ = await self.workers[index].wait()
        self.workers[index] = try Self.worker(index, environment: self.workerEnvironment)
    }

    /// Every push the load had accepted reaches its end on `server`: the fan-out (when given) sent to each of its tokens,
    /// each per-user push to its one token or superseded there; APNs accepted each recorded send once, and at most the
    /// batches in flight at the crash (one per claim loop of each worker) again.
    func expectEverythingDelivered(on server: PostgresServer, fanOut: String?) async throws {
        let accepted = self.load.acceptedIDs
        try await self.table("accepted", of: accepted, on: server)
        let ids = "SELECT id FROM accepted"
        var states: [String] = []
        for _ in 0..<1200 {
            states = try await server.query("SELECT state || ' ' || count(*) FROM pushes WHERE push_id IN (\(ids)) GROUP BY state ORDER BY state")
            if states.allSatisfy({ $0.hasPrefix("done ") || $0.hasPrefix("superseded ") }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let finished = states.compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(0, +)
        #expect(finished == accepted.count && states.allSatisfy { $0.hasPrefix("done ") || $0.hasPrefix("superseded ") },
                "\(accepted.count) accepted: \(states)")
        if let fanOut {
            let reached = try await server.query(
                "SELECT state || ' ' || (SELECT count(DISTINCT token) FROM delivery_outcomes WHERE push_id = '\(fanOut)' AND status = 200) FROM pushes WHERE push_id = '\(fanOut)'")
            #expect(reached == ["done \(FailoverTests.fanOutTokens)"])
        }
        let perUser = try await server.query(
            """
            SELECT count(*) FILTER (WHERE state = 'done'
                AND coalesce((counts->>'sent')::int, 0) + coalesce((counts->>'superseded')::int, 0) <> 1)
            FROM pushes WHERE push_id IN (\(ids)) AND audience ? 'channel'
            """)
        #expect(perUser == ["0"], "per-user pushes done that reached no token")
        let recorded = Int(try await server.query("SELECT count(*) FROM delivery_outcomes WHERE status = 200")[0]) ?? -1
        let twice = try await server.query("SELECT count(*) FROM (SELECT 1 FROM delivery_outcomes GROUP BY push_id, token HAVING count(*) > 1) t")
        #expect(twice == ["0"])
        let sent = try #require(try counter("accepted", await get("http://127.0.0.1:\(self.simulatorAdminPort)/counters").1))
        #expect(sent >= recorded && sent - recorded <= 2 * 4 * FailoverTests.batchSize, "APNs accepted \(sent), \(recorded) recorded")
    }

    /// A table `name` of `ids` (a `uuid` column `id`) on `server`: thousands of ids would not fit one psql argument.
    func table(_ name: String, of ids: [String], on server: PostgresServer) async throws {
        let file = self.folder.appendingPathComponent("\(name).txt")
        try ids.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        _ = try await server.query("DROP TABLE IF EXISTS \(name); CREATE TABLE \(name) (id uuid PRIMARY KEY)")
        _ = try await server.query("\\copy \(name) FROM '\(file.path)'")
    }

    /// Every process stops on SIGTERM with status 0.
    func expectCleanExits() async throws {
        for process in self.workers + [self.api] { process.signal(SIGTERM) }
        for (process, name) in zip(self.workers + [self.api], ["worker 0", "worker 1", "api"]) {
            let result = await process.wait()
            #expect(result.status == 0, "\(name) exited \(result.status): \(result.stderr.suffix(3000))")
        }
    }

    func stop() async {
        for process in self.workers + [self.api, self.simulator] { process.killIfRunning() }
        _ = await self.simulator.wait()
        await self.primary.stop()
        await self.standby.stop()
    }
}
