import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A worker's listening connection left on a server that stopped answering without closing it (its backend frozen
/// with SIGSTOP: the socket stays open and nothing comes back) is replaced once its heartbeat goes unanswered, and a
/// push queued after that is claimed on its notification, long before the worker's poll would find it.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct ListenerHeartbeatTests {
    @Test func aSilentListeningConnectionIsReplaced() async throws {
        try await DispatchHarness.run { harness in
            let device = try #require(try await harness.register(1, name: "match").first)
            let worker = harness.worker {
                $0.pollInterval = .seconds(600)
                $0.listenerHeartbeat = .milliseconds(500)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await worker.run() }
                defer { group.cancelAll() }
                let frozen = try await Self.listener(of: harness.database, other: nil)
                try #require(kill(frozen, SIGSTOP) == 0, "the test database's server must run on this machine")
                defer {
                    kill(frozen, SIGCONT)
                    kill(frozen, SIGTERM)
                }
                _ = try await Self.listener(of: harness.database, other: frozen)

                let pushID = try await harness.push(DispatchHarness.liveActivity("update", "match", #", "content_state": {"home": 1}"#))
                let deadline = ContinuousClock.now + .seconds(60)
                var report = try await harness.report(pushID)
                while !report.state.isFinished, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                    report = try await harness.report(pushID)
                }
                #expect(report.state.isFinished, "claimed on its notification, not at the 600 s poll")
                #expect(harness.received(device.token).count == 1)
            }
        }
    }

    /// The process id of the backend of a worker's listening connection (its last statement the `LISTEN` or the
    /// heartbeat's), other than `other`, once there is one.
    static func listener(of database: Database, other: Int32?) async throws -> Int32 {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let rows = try await database.query(
                """
                SELECT pid FROM pg_stat_activity
                WHERE datname = current_database() AND (query ILIKE 'LISTEN%' OR query = 'SELECT pg_is_in_recovery()')
                """,
                logger: TestDatabase.logger
            ).collect()
            if let pid = try rows.map({ try $0.decode(Int32.self) }).first(where: { $0 != other }) { return pid }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NoListener()
    }

    struct NoListener: Error {}
}
