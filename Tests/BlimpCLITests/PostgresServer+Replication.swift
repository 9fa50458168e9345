import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Streaming replication between ``PostgresServer``s, as a failover manager (Patroni, pg_auto_failover) runs it: a
/// standby copied from its primary with `pg_basebackup -R`, synchronous replication, a crash and a promotion.
/// See https://www.postgresql.org/docs/current/warm-standby.html
extension PostgresServer {
    /// A streaming standby of `primary` in `folder` (emptied first), on `port`, started: a base backup with `-R`, which
    /// writes `primary_conninfo` and `standby.signal`, after a fast checkpoint (a spread one waits up to minutes).
    static func standby(of primary: PostgresServer, in folder: URL, port: Int = freePort()) async throws -> PostgresServer {
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        chmod(folder.path, 0o700)
        if getuid() == 0 {
            chmod(folder.deletingLastPathComponent().path, 0o755)
            guard try await Self.run("/usr/bin/chown", ["postgres:postgres", folder.path]).status == 0 else {
                throw CLIExpectationFailed("cannot give \(folder.path) to the postgres user")
            }
        }
        let backup = try await Self.run(
            Self.bin("pg_basebackup"), ["-h", "127.0.0.1", "-p", "\(primary.port)", "-U", "blimp", "-D", folder.path, "-R", "-X", "stream", "-c", "fast"],
            asOwner: true)
        guard backup.status == 0 else { throw CLIExpectationFailed("pg_basebackup failed: \(backup.output)") }
        let standby = PostgresServer(folder: folder, port: port)
        try await standby.start()
        return standby
    }

    /// Makes each commit wait for a standby (`synchronous_standby_names = '*'`), set on this server only, after the base
    /// backup: a standby that copied it would, once promoted, wait for a standby of its own. Returns once a standby
    /// streams synchronously.
    func requireSynchronousStandby() async throws {
        _ = try await self.query("ALTER SYSTEM SET synchronous_standby_names = '*'")
        _ = try await self.query("SELECT pg_reload_conf()")
        for _ in 0..<300 {
            if try await self.query("SELECT sync_state FROM pg_stat_replication") == ["sync"] { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIExpectationFailed("no synchronous standby: \(try await self.query("SELECT application_name, state, sync_state FROM pg_stat_replication"))")
    }

    /// Waits until a standby streams from this server and has replayed everything written so far.
    func waitForStandbyToCatchUp() async throws {
        for _ in 0..<600 {
            let lag = try await self.query("SELECT pg_current_wal_lsn() = replay_lsn FROM pg_stat_replication WHERE state = 'streaming'")
            if lag == ["t"] { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIExpectationFailed("the standby did not catch up: \(try await self.query("SELECT state, replay_lsn FROM pg_stat_replication"))")
    }

    /// `pg_ctl promote`: the standby ends recovery and takes writes; returns once it does.
    func promote() async throws {
        let promoted = try await Self.run(Self.bin("pg_ctl"), ["promote", "-w", "-D", self.folder.path], asOwner: true)
        guard promoted.status == 0 else { throw CLIExpectationFailed("pg_ctl promote failed: \(promoted.output)") }
    }

    /// An immediate shutdown (SIGQUIT, as `pg_ctl stop -m immediate` sends): sessions are cut, nothing is flushed,
    /// as when the machine goes away. Waits for the postmaster to exit.
    func crash() async {
        await self.stop(signal: SIGQUIT)
    }

    /// Whether the server is in recovery (a standby).
    var isStandby: Bool {
        get async throws { try await self.query("SELECT pg_is_in_recovery()") == ["t"] }
    }
}
