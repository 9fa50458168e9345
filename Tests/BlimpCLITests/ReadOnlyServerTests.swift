import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// One host that turns read-only and then takes writes again, as a managed service's name does when DNS moves it from
/// a demoted primary to the promoted standby: the ``Database`` on it is down meanwhile (a write is refused as
/// unavailable, never a database error), and once the server takes writes again, the pool whose write was refused as
/// read-only is replaced: requests go over new connections, none left on what was read-only.
@Suite(.enabled(if: TestDatabase.isEnabled), .serialized) struct ReadOnlyServerTests {
    @Test func aServerThatTurnsReadOnlyIsDownThenServedOnNewConnections() async throws {
        try await PostgresServer.withStarted { server, _ in
            _ = try await server.query("CREATE TABLE t (x int)")
            try await DatabaseURL(server.url).withDatabase(logger: TestDatabase.logger) { database in
                let store = Writes(database: database)
                try await store.insert()

                // Read-only for every session, the pool's own included (a reload reaches them all).
                _ = try await server.query("ALTER SYSTEM SET default_transaction_read_only = on")
                _ = try await server.query("SELECT pg_reload_conf()")
                try await waitUntil { database.isDown }
                await #expect {
                    try await store.insert()
                } throws: { error in
                    guard case StoreError.unavailable = error else { return false }
                    return true
                }

                _ = try await server.query("ALTER SYSTEM RESET default_transaction_read_only")
                _ = try await server.query("SELECT pg_reload_conf()")
                let writable = Date()
                try await waitUntil { !database.isDown }
                try await store.insert()
                let started = try await database.query("SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()")
                    .collect()[0].decode(Date.self)
                #expect(started > writable, "a connection from before the server took writes again serves requests")
            }
        }
    }

    /// Polls `condition` every 50 ms for up to 30 s.
    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(condition())
    }
}

/// A write through a store's error mapping, as every store makes one.
private struct Writes {
    let database: Database

    func insert() async throws(StoreError) {
        try await StoreError.mapping { [database] in
            _ = try await database.query("INSERT INTO t VALUES (1)", logger: TestDatabase.logger)
        }
    }
}
