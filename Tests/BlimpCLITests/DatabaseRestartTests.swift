import AsyncHTTPClient
import BlimpTestSupport
import Foundation
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// PostgreSQL stopped and started again under load, with `blimp api`, two `blimp worker`s and `blimp apns-sim` as
/// real processes: while it is down the Push API answers 503 with `Retry-After` (nothing else, and no process
/// dies); afterwards every push answered 202 reaches its end, the last push of each name to `all` reaches every token,
/// each per-user push (one channel's) reaches its token or is superseded there, and no token is sent a push twice
/// beyond the batches in flight when the database went away.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct DatabaseRestartTests {
    static let names = 10
    static let tokensPerName = 20
    static let batchSize = 10

    @Test func aRestartedDatabaseLosesNoAcceptedPush() async throws {
        try await PostgresServer.withStarted { database, folder in
            let environment = ["DATABASE_URL": database.url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
            let migrated = try await BlimpProcess.run(["migrate"], environment: environment)
            #expect(migrated.status == 0, "\(migrated.stderr)")
            let (credentials, keyFile) = try await BlimpProcess.createScores(in: folder, environment: environment)
            _ = try await database.query(
                """
                INSERT INTO channels (app_id, channel_id, opt_in)
                    SELECT 1, md5('c' || i)::uuid, true FROM generate_series(1, \(Self.names * Self.tokensPerName)) i;
                INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
                    SELECT 1, md5('c' || i)::uuid, 'n' || (i % \(Self.names)), 'a' || i, md5('t' || i) || md5('u' || i),
                           'active', now(), 1 FROM generate_series(1, \(Self.names * Self.tokensPerName)) i;
                """)

            let (simPort, adminPort, apiPort) = (freePort(), freePort(), freePort())
            let simulator = try BlimpProcess(
                ["apns-sim", "--port", "\(simPort)", "--admin-port", "\(adminPort)", "--state-dir", folder.appendingPathComponent("sim").path,
                 "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile.path)", "--latency-ms", "5"])
            try await waitUntilServing("http://127.0.0.1:\(adminPort)/counters")
            let api = try BlimpProcess(
                ["api", "--port", "\(apiPort)", "--push-rate-limit", "0", "--server-rate-limit", "0"], environment: environment)
            try await waitUntilServing("http://127.0.0.1:\(apiPort)/health")
            var workerEnvironment = environment
            workerEnvironment["BLIMP_APNS_URL"] = "https://127.0.0.1:\(simPort)"
            workerEnvironment["BLIMP_APNS_CA_FILE"] = folder.appendingPathComponent("sim/ca.pem").path
            let workers = try (1...2).map { index in
                try BlimpProcess(
                    ["worker", "--batch-size", "\(Self.batchSize)", "--lease-seconds", "5", "--name", "w\(index)"], environment: workerEnvironment)
            }

            // Pushes go on from two senders to `all` and two per-user ones while the database is stopped (until the
            // API has refused some, at most 30 s) and started again.
            let activities = try await database.query("SELECT name || ' ' || channel_id FROM live_activities ORDER BY channel_id")
                .map { line in line.split(separator: " ").map(String.init) }.map { (name: $0[0], channel: $0[1]) }
            let load = PushLoad(
                url: "http://127.0.0.1:\(apiPort)/api/push", appKey: credentials["app_key"]!, masterSecret: credentials["master_secret"]!,
                activities: activities)
            let senders = Task { try await load.run(senders: 2, perUserSenders: 2) }
            try await Task.sleep(for: .seconds(2))
            await database.stop()
            for _ in 0..<300 where load.statuses.withLock({ $0[503] ?? 0 }) < 3 { try await Task.sleep(for: .milliseconds(100)) }
            try await database.start()
            // Until every name has had pushes to `all` accepted after the restart (at most 90 s: the suite's other
            // tests share the machine).
            let acceptedBefore = load.acceptedToAll.withLock { $0 }
            func acceptedSinceRestart() -> Bool {
                load.acceptedToAll.withLock { now in
                    (0..<Self.names).allSatisfy { now["n\($0)", default: 0] >= acceptedBefore["n\($0)", default: 0] + 2 }
                }
            }
            for _ in 0..<900 where !acceptedSinceRestart() { try await Task.sleep(for: .milliseconds(100)) }
            #expect(acceptedSinceRestart(), "pushes to all accepted by name, before and after the restart: \(acceptedBefore), \(load.acceptedToAll.withLock { $0 })")
            load.stop()
            try await senders.value
            let statuses = load.statuses.withLock { $0 }

            #expect(statuses.keys.allSatisfy { [202, 503].contains($0) }, "\(statuses)")
            #expect((statuses[503] ?? 0) > 0, "no push was refused while the database was down: \(statuses)")
            #expect(load.missingRetryAfter.withLock { $0 } == 0)
            let accepted = load.accepted.withLock { $0 }
            #expect(accepted.count == statuses[202] ?? 0 && accepted.count >= 2 * Self.names, "\(statuses)")

            // Every accepted push reaches its end; the last of each name to `all` is done and sent to each of its
            // tokens; each per-user push that is done reached its one token or was superseded there.
            let ids = accepted.map { "'\($0)'" }.joined(separator: ",")
            var states: [String] = []
            for _ in 0..<600 {
                states = try await database.query("SELECT state FROM pushes WHERE push_id IN (\(ids))")
                if states.count == accepted.count, states.allSatisfy({ ["done", "superseded"].contains($0) }) { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(states.count == accepted.count && states.allSatisfy { ["done", "superseded"].contains($0) }, "\(Dictionary(grouping: states) { $0 }.mapValues(\.count))")
            let lastOfEachName = try await database.query(
                """
                SELECT DISTINCT ON (activity_name) activity_name || '|' || state || '|' ||
                       (SELECT count(DISTINCT token) FROM delivery_outcomes o WHERE o.push_id = p.push_id AND o.status = 200)
                FROM pushes p WHERE push_id IN (\(ids)) AND audience = '"all"' ORDER BY activity_name, accepted_at DESC
                """)
            #expect(lastOfEachName == (0..<Self.names).map { "n\($0)|done|\(Self.tokensPerName)" }.sorted())
            let perUser = try await database.query(
                """
                SELECT count(*) || ' ' || count(*) FILTER (WHERE state = 'done'
                    AND coalesce((counts->>'sent')::int, 0) + coalesce((counts->>'superseded')::int, 0) <> 1)
                FROM pushes WHERE push_id IN (\(ids)) AND audience ? 'channel'
                """)
            #expect(perUser.first?.hasSuffix(" 0") == true && perUser.first?.hasPrefix("0 ") == false, "per-user pushes, and those done that reached no token: \(perUser)")

            // APNs accepted each recorded send once, and at most the batches in flight when the database went away
            // (one per worker's claim loop) again.
            let recorded = Int(try await database.query("SELECT count(*) FROM delivery_outcomes WHERE status = 200")[0]) ?? -1
            let twice = try await database.query("SELECT count(*) FROM (SELECT 1 FROM delivery_outcomes GROUP BY push_id, token HAVING count(*) > 1) t")
            #expect(twice == ["0"])
            let sent = try #require(try counter("accepted", await get("http://127.0.0.1:\(adminPort)/counters").1))
            #expect(sent >= recorded && sent - recorded <= 2 * 4 * Self.batchSize, "APNs accepted \(sent), \(recorded) recorded")

            for process in workers + [api, simulator] { process.signal(SIGTERM) }
            for (process, name) in zip(workers + [api], ["worker 1", "worker 2", "api"]) {
                let result = await process.wait()
                #expect(result.status == 0, "\(name) exited \(result.status): \(result.stderr.suffix(3000))")
            }
            _ = await simulator.wait()
        }
    }
}

/// Senders posting Live Activity updates to the Push API as fast as it answers, until stopped: to `all`, each to one of
/// the names in turn, or per-user, each to one activity's channel in turn. Keeps what was accepted, and how many
/// answers had each status.
final class PushLoad: Sendable {
    let url: String
    let headers: [(String, String)]
    let accepted = Mutex<[String]>([])
    /// How many pushes to `all` were accepted, by name.
    let acceptedToAll = Mutex<[String: Int]>([:])
    let missingRetryAfter = Mutex(0)
    let statuses = Mutex<[Int: Int]>([:])
    /// The activities per-user senders update, by name and channel id.
    let activities: [(name: String, channel: String)]
    private let stopped = Atomic(false)

    init(url: String, appKey: String, masterSecret: String, activities: [(name: String, channel: String)] = []) {
        self.url = url
        self.activities = activities
        self.headers = [
            ("Authorization", "Basic " + Data("\(appKey):\(masterSecret)".utf8).base64EncodedString()),
            ("Accept", "application/vnd.urbanairship+json; version=3"), ("Content-Type", "application/json"),
        ]
    }

    func stop() { self.stopped.store(true, ordering: .relaxed) }

    /// Sends until stopped, counting the answers by status (0: no answer) in ``statuses``.
    func run(senders: Int, perUserSenders: Int = 0) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sender in 0..<senders {
                group.addTask {
                    var sequence = 0
                    while !self.stopped.load(ordering: .relaxed) {
                        sequence += 1
                        let name = "n\((sequence * senders + sender) % DatabaseRestartTests.names)"
                        let status = try await self.send(name: name, audience: #""all""#, value: sequence)
                        self.statuses.withLock { $0[status, default: 0] += 1 }
                        if status == 202 { self.acceptedToAll.withLock { $0[name, default: 0] += 1 } }
                    }
                }
            }
            for sender in 0..<perUserSenders {
                group.addTask {
                    var sequence = 0
                    while !self.stopped.load(ordering: .relaxed) {
                        sequence += 1
                        let activity = self.activities[(sequence * perUserSenders + sender) % self.activities.count]
                        let audience = #"{"ios_channel": "\#(activity.channel)"}"#
                        let status = try await self.send(name: activity.name, audience: audience, value: sequence)
                        self.statuses.withLock { $0[status, default: 0] += 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    private func send(name: String, audience: String, value: Int) async throws -> Int {
        var request = HTTPClientRequest(url: self.url)
        request.method = .POST
        for (field, value) in self.headers { request.headers.add(name: field, value: value) }
        let body = #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "\#(name)", "priority": 5, "content_state": {"n": \#(value)}}}}}"#
        request.body = .bytes(ByteBuffer(string: body))
        // Well beyond the API's request timeout (15 s): an answer must come.
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(60)) else { return 0 }
        let answer = try await response.body.collect(upTo: 1 << 20)
        let status = Int(response.status.code)
        if status == 503, response.headers["Retry-After"].isEmpty { self.missingRetryAfter.withLock { $0 += 1 } }
        if status == 202,
            let object = try JSONSerialization.jsonObject(with: Data(String(buffer: answer).utf8)) as? [String: Any],
            let id = (object["push_ids"] as? [String])?.first
        {
            self.accepted.withLock { $0.append(id) }
        }
        return status
    }
}
