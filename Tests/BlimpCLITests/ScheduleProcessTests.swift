import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `blimp worker` processes fire schedules: a worker killed with SIGKILL as soon as its first firings commit leaves
/// nothing half done, and another worker fires the rest; each of 2,000 schedules fires exactly once.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct ScheduleProcessTests {
    @Test func aWorkerKilledWhileFiringLeavesEachScheduleFiredOnce() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
                let keyFile = try await BlimpProcess.createScores(in: folder, environment: environment).keyFile
                let (simPort, adminPort) = (freePort(), freePort())
                let simulator = try BlimpProcess(
                    ["apns-sim", "--port", "\(simPort)", "--admin-port", "\(adminPort)", "--state-dir", folder.appendingPathComponent("sim").path,
                     "--trust-key", "ABC123DEFG:DEF123GHIJ:\(keyFile.path)"])
                defer { simulator.killIfRunning() }
                try await waitUntilServing("http://127.0.0.1:\(adminPort)/counters")
                var workerEnvironment = environment
                workerEnvironment["BLIMP_APNS_URL"] = "https://127.0.0.1:\(simPort)"
                workerEnvironment["BLIMP_APNS_CA_FILE"] = folder.appendingPathComponent("sim/ca.pem").path

                // 2,000 schedules due in two seconds, each an alert: a worker fires them 100 per transaction, so the kill
                // comes while most are still due.
                let count = 2000
                let due = AirshipDate.format(Date().addingTimeInterval(2))
                let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "Kick-off"}}"#
                let object = try RawJSONParser.parse(#"{"schedule": {"scheduled_time": "\#(due)"}, "push": \#(push)}"#.utf8)
                let schedule = try ScheduledPush(object, at: "", now: Date())
                let store = ScheduleStore(client: client, logger: TestDatabase.logger)
                _ = try await store.create(Array(repeating: schedule, count: count), appID: 1, now: Date(), by: .commandLine)

                func fired() async throws -> (firings: Int, schedules: Int, pushes: Int) {
                    try await client.query(
                        """
                        SELECT count(*)::int, count(DISTINCT schedule_id)::int,
                               (SELECT count(*)::int FROM pushes p WHERE p.push_id IN (SELECT push_id FROM schedule_firings))
                        FROM schedule_firings
                        """,
                        logger: TestDatabase.logger
                    ).decode((Int, Int, Int).self).reduce(into: []) { $0.append($1) }[0]
                }
                func waitUntil(_ condition: ((firings: Int, schedules: Int, pushes: Int)) -> Bool) async throws -> (firings: Int, schedules: Int, pushes: Int) {
                    for _ in 0..<3000 {
                        let now = try await fired()
                        if condition(now) { return now }
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    Issue.record("not reached in time: \(try await fired())")
                    return try await fired()
                }

                let first = try BlimpProcess(["worker", "--name", "first", "--log-level", "warning"], environment: workerEnvironment)
                defer { first.killIfRunning() }
                let atKill = try await waitUntil { $0.firings > 0 }
                first.signal(SIGKILL)
                _ = await first.wait()
                let afterKill = try await fired()
                #expect(afterKill.firings == afterKill.schedules && afterKill.firings == afterKill.pushes, "\(afterKill)")
                #expect(afterKill.firings < count, "the first worker fired every schedule before it was killed")

                let second = try BlimpProcess(["worker", "--name", "second", "--log-level", "warning"], environment: workerEnvironment)
                defer { second.killIfRunning() }
                let end = try await waitUntil { $0.schedules == count }
                #expect(end.firings == count && end.pushes == count, "killed at \(atKill), then \(afterKill), at the end \(end)")
                let unfinished = try await client.query(
                    "SELECT count(*)::int FROM schedules WHERE next_fire_at IS NOT NULL OR next_occurrence IS NOT NULL", logger: TestDatabase.logger
                ).decode(Int.self).reduce(into: []) { $0.append($1) }
                #expect(unfinished == [0])
                second.signal(SIGTERM)
                let stopped = await second.wait()
                #expect(stopped.status == 0, "\(stopped.stderr.suffix(3000))")
                simulator.signal(SIGTERM)
                _ = await simulator.wait()
            }
        }
    }
}
