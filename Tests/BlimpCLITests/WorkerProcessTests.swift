import AsyncHTTPClient
import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import NIOCore
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blimp worker` as real processes against `blimp apns-sim`: a worker killed with SIGKILL mid fan-out loses no
/// target (another resumes from the last checkpoints, resending at most the batches in flight, one per claim loop),
/// and one stopped with SIGTERM records its batches in flight, gives their parts back and exits 0. One killed mid-batch
/// of per-user pushes loses none of them either, and resends at most its batches in flight.
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
                let sent = try #require(try counter("accepted", await get("http://127.0.0.1:\(adminPort)/counters").1))
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

                // SIGKILL mid-batch of per-user pushes (one update of `crash` to each of its channels), with APNs slow
                // enough that batches are in flight: another worker sends what the killed one did not record.
                let setLatency = { (milliseconds: Int) in
                    var request = HTTPClientRequest(url: "http://127.0.0.1:\(adminPort)/connection")
                    request.method = .PUT
                    request.body = .bytes(ByteBuffer(string: #"{"max_concurrent_streams": 1000, "go_away_every": 0, "drop_every": 0, "latency_milliseconds": \#(milliseconds)}"#))
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(5))
                    #expect(response.status == .ok)
                }
                let acceptedBefore = try #require(try counter("accepted", await get("http://127.0.0.1:\(adminPort)/counters").1))
                try await setLatency(1500)
                var perUser: [UUID] = []
                let channels = try await client.query(
                    "SELECT channel_id FROM live_activities WHERE name = 'crash' ORDER BY channel_id", logger: TestDatabase.logger
                ).decode(UUID.self).reduce(into: []) { $0.append($1) }
                for chunk in stride(from: 0, to: channels.count, by: 100) {
                    let bodies = channels[chunk..<min(chunk + 100, channels.count)].map { channel in
                        #"{"audience": {"ios_channel": "\#(channel.lowercaseString)"}, "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "crash", "priority": 5, "content_state": {"n": 2}}}}}"#
                    }
                    let submission = try PushSubmission(
                        appID: 1, pushes: try Push.pushes(in: try RawJSONParser.parse("[\(bodies.joined(separator: ","))]".utf8)), idempotencyKey: nil)
                    _ = try await intake.accept(submission)
                    perUser += submission.pushIDs
                }
                func unfinished() async throws -> (sending: Int, left: Int) {
                    try await client.query(
                        """
                        SELECT count(*) FILTER (WHERE state = 'sending')::int, count(*) FILTER (WHERE state NOT IN ('done', 'superseded'))::int
                        FROM pushes WHERE push_id = ANY(\(perUser))
                        """, logger: TestDatabase.logger
                    ).decode((Int, Int).self).reduce(into: []) { $0.append($1) }[0]
                }
                var claimed = 0
                for _ in 0..<600 {
                    claimed = try await unfinished().sending
                    if claimed > 0 { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(claimed > 0, "no per-user push was claimed")
                third.signal(SIGKILL)
                _ = await third.wait()
                try await setLatency(20)
                let fourth = try worker("fourth")
                var remaining = channels.count
                for _ in 0..<1200 {
                    remaining = try await unfinished().left
                    if remaining == 0 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(remaining == 0, "\(remaining) per-user pushes never finished")
                let reached = try await client.query(
                    "SELECT count(DISTINCT push_id)::int FROM delivery_outcomes WHERE push_id = ANY(\(perUser)) AND status = 200",
                    logger: TestDatabase.logger
                ).decode(Int.self).reduce(into: []) { $0.append($1) }
                #expect(reached == [channels.count])
                let acceptedAfter = try #require(try counter("accepted", await get("http://127.0.0.1:\(adminPort)/counters").1))
                let resent = acceptedAfter - acceptedBefore - channels.count
                #expect(resent >= 0 && resent <= 4 * 100, "\(resent) per-user pushes sent again: more than a batch per loop")
                fourth.signal(SIGTERM)
                #expect(await fourth.wait().status == 0)
                simulator.signal(SIGTERM)
                _ = await simulator.wait()
            }
        }
    }
}

/// A count among the simulator's `/counters`.
func counter(_ name: String, _ counters: String) throws -> Int? {
    (try JSONSerialization.jsonObject(with: Data(counters.utf8)) as? [String: Any])?[name] as? Int
}
