import BlimpStore
import BlimpTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Debian's PgBouncer (1.18: no prepared statements in transaction mode) of a test's own, in transaction mode, in
/// front of a PostgreSQL server, on a free loopback port. It runs in the foreground as the test's child; as root, as
/// the postgres user through `setpriv` (PgBouncer refuses to run as root), as ``PostgresServer`` does.
final class PgBouncer: @unchecked Sendable {
    let port: Int
    private let folder: URL
    private let process = Process()

    /// Starts one in `folder` in front of the server `serverURL` names (its user, and password if any, log in to it),
    /// with `poolSize` server connections per database, and waits until it lets a client through to `serverURL`'s
    /// database.
    static func start(in folder: URL, for serverURL: String, poolSize: Int) async throws -> PgBouncer {
        guard let server = URLComponents(string: serverURL), server.user != nil else { throw CLIExpectationFailed("no user in \(serverURL)") }
        let bouncer = PgBouncer(folder: folder, port: freePort())
        try await bouncer.start(for: server, poolSize: poolSize)
        return bouncer
    }

    private init(folder: URL, port: Int) {
        self.folder = folder
        self.port = port
    }

    /// `serverURL` through this PgBouncer: `postgres://user@127.0.0.1:port/database?pooler=transaction&application_name=…`
    /// (the one startup parameter Blimp sends through a pooler, which PgBouncer keeps for each client).
    func url(for serverURL: String) -> String {
        var components = URLComponents(string: serverURL)!
        (components.host, components.port, components.password) = ("127.0.0.1", self.port, nil)
        components.queryItems = [
            URLQueryItem(name: "pooler", value: "transaction"), URLQueryItem(name: "application_name", value: "blimp-through-pgbouncer"),
        ]
        return components.string!
    }

    private func start(for server: URLComponents, poolSize: Int) async throws {
        let ini = """
            [databases]
            * = host=\(server.host ?? "127.0.0.1") port=\(server.port ?? 5432)

            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(self.port)
            unix_socket_dir =
            auth_type = trust
            auth_file = \(self.folder.appendingPathComponent("users.txt").path)
            pool_mode = transaction
            default_pool_size = \(poolSize)
            max_client_conn = 500
            server_reset_query =
            """
        // With trust the file only names who may connect; a password in it is what PgBouncer logs in to the server with.
        let users = "\"\(server.user ?? "")\" \"\(server.password ?? "")\"\n"
        try ini.write(to: self.folder.appendingPathComponent("pgbouncer.ini"), atomically: true, encoding: .utf8)
        try users.write(to: self.folder.appendingPathComponent("users.txt"), atomically: true, encoding: .utf8)
        let log = self.folder.appendingPathComponent("pgbouncer.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        let arguments = [self.folder.appendingPathComponent("pgbouncer.ini").path]
        if getuid() == 0 {
            // The postgres user must read the folder: the temporary folders above it may be private.
            var directory = self.folder
            while directory.path != "/" && directory.path != "/tmp" {
                chmod(directory.path, 0o755)
                directory.deleteLastPathComponent()
            }
            self.process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            self.process.arguments = ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", "/usr/sbin/pgbouncer"] + arguments
        } else {
            self.process.executableURL = URL(fileURLWithPath: "/usr/sbin/pgbouncer")
            self.process.arguments = arguments
        }
        (self.process.standardInput, self.process.standardOutput, self.process.standardError) = (FileHandle.nullDevice, logHandle, logHandle)
        try self.process.run()
        let target = try DatabaseURL(self.url(for: server.string!))
        for _ in 0..<100 {
            if (try? await target.checkReachable(logger: TestDatabase.logger)) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIExpectationFailed("PgBouncer did not start: \(self.log.suffix(2000))")
    }

    /// What it logged.
    var log: String {
        (try? String(contentsOf: self.folder.appendingPathComponent("pgbouncer.log"), encoding: .utf8)) ?? ""
    }

    /// Kills it, and waits for the process to exit. (It inherits the signal mask of the test's dispatch threads, which
    /// block SIGTERM and SIGINT, and it never unblocks them as PostgreSQL does.)
    func stop() async {
        kill(self.process.processIdentifier, SIGKILL)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.process.waitUntilExit()
                continuation.resume()
            }
        }
    }
}
