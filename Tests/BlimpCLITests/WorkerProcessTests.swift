import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blimp worker` as real processes against `blimp apns-sim`: a worker killed with SIGKILL mid fan-out loses no
/// target (another resumes from the last checkpoints, resending at most the batches in flight, one per claim loop),
/// and one stopped with SIGTERM records its batches in flight, gives their parts back and exits 0.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct WorkerProcessTests {
    @Test func killedAndStoppedWorkersLoseNoTarget() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
                let keyFile = try await BlimpProcess.createScores(in: folder, environment: environment).keyFile
                let tokens = 2000
                for name in ["crash", "stop"] {
                    try await client.query(PostgresQuery(unsafeSQL: """
                        INSERT INTO channels (app_id, channel_id, opt_in)
                            SELECT 1, md5('\(name)/' || i)::uuid, true FROM generate_series(1, \(tokens)) i;
                        """), logger: TestDatabase.logger)
                    try await client.query(PostgresQuery(unsafeSQL: """
                        INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
                            SELECT 1, md5('\(name)/' || i)::uuid, '\(name)', 'a' || i, md5('t' || i) || md5('\(name)' || i),
                                   'active', now(), 1 FROM generate_series(1, \(tokens)) i;
                        """), logger: TestDatabase.logger)
                }

                let (simPort, adminPort) = (freePort(), freePort())
                let simulator = try BlimpProcess(
                    ["apns-sim", "--port", "\(simPort)", "--admin-port", "\(adminPort)", "--state-dir", folder.appendingPathComponent("sim").path,
                     "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile.path)", "--latency-ms", "20"])
                try await waitUntilServing("http://127.0.0.1:\(adminPort)/counters")
                var workerEnvironment = environment
                workerEnvironment["BLIMP_APNS_URL"] = "https://127.0.0.1:\(simPort)"
                workerEnvironment["BLIMP_APNS_CA_FILE"] = folder.appendingPathComponent("sim/ca.pem").path
                func worker(_ name: String) throws -> BlimpProcess {
                    try BlimpProcess(["worker", "--batch-size", "100", "--lease-seconds", "2", "--name", name], environment: workerEnvironment)
                }
                let intake = PushIntake(client: client, logger: TestDatabase.logger)
                func push(_ name: String) async throws -> UUID {
                    let body = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "\#(name)", "priority": 5, "content_state": {"n": 1}}}}}"#
                    let submission = try PushSubmission(appID: 1, pushes: try Push.pushes(in: try RawJSONParser.parse(body.utf8)), idempotencyKey: nil)
                    _ = try await intake.accept(submission)
                    return submission.pushIDs[0]
                }
                /// The push's state, whether any part has checkpointed, and whether every part left is free to claim.
                func state(_ id: UUID) async throws -> (state: String, progressed: Bool, free: Bool) {
                    try await client.query(
                        """
                        SELECT p.state, bool_or(t.cursor_channel_id <> t.after_channel_id) IS TRUE,
                               bool_and(t.state <> 'sending' OR t.lease_expires_at <= now()) IS NOT FALSE
                        FROM pushes p LEFT JOIN push_parts t ON t.push_id = p.push_id
                        WHERE p.push_id = \(id) GROUP BY p.state
                        """, logger: TestDatabase.logger
                    ).decode((String, Bool, Bool).self).reduce(into: []) { $0.append($1) }[0]
                }
                func waitFor(_ id: UUID, _ condition: (String, Bool) -> Bool) async throws {
                    for _ in 0..<600 {
                        let current = try await state(id)
                        if condition(current.state, current.progressed) { return }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    Issue.record("push \(id) never got there")
                }
                func delivered(_ id: UUID) async throws -> (distinct: Int, all: Int) {
                    try await client.query(
                        "SELECT count(DISTINCT token)::int, count(*)::int FROM delivery_outcomes WHERE push_id = \(id) AND status = 200",
                        logger: TestDatabase.logger
                    ).decode((Int, Int).self).reduce(into: []) { $0.append($1) }[0]
                }

                // SIGKILL mid fan-out: another worker resumes after the lease.
                let first = try worker("first")
                let crash = try await push("crash")
                try await waitFor(crash) { _, progressed in progressed }
                first.signal(SIGKILL)
                _ = await first.wait()
                let second = try worker("second")
                try await waitFor(crash) { state, _ in state == "done" }
                if try await state(crash).state != "done" {
                    second.signal(SIGTERM)
                    simulator.signal(SIGTERM)
                    let simulatorLog = await simulator.wait().stderr
                    Issue.record("simulator: \(simulatorLog.suffix(1500))\nworker: \(await second.wait().stderr.suffix(1500))")
                    return
                }
                let (distinct, _) = try await delivered(crash)
                #expect(distinct == tokens)
                let (_, accepted) = try await get("http://127.0.0.1:\(adminPort)/counters")
                let counters = try #require(try JSONSerialization.jsonObject(with: Data(accepted.utf8)) as? [String: Any])
                let sent = try #require(counters["accepted"] as? Int)
                #expect(sent >= tokens && sent - tokens <= 4 * 100, "\(sent) accepted for \(tokens) tokens: more resent than a batch per loop")

                // SIGTERM mid fan-out: the batch in flight is recorded, the push given back, the process exits 0.
                let stop = try await push("stop")
                try await waitFor(stop) { _, progressed in progressed }
                second.signal(SIGTERM)
                let stopped = await second.wait()
                #expect(stopped.status == 0, "\(stopped.stderr)")
                let left = try await state(stop)
                #expect(left.state == "sending" && left.free, "\(left)")
                let third = try worker("third")
                try await waitFor(stop) { state, _ in state == "done" }
                #expect(try await delivered(stop).distinct == tokens)
                third.signal(SIGTERM)
                #expect(await third.wait().status == 0)
                simulator.signal(SIGTERM)
                _ = await simulator.wait()
            }
        }
    }
}
