import Foundation
import BlimpTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of a test's own, in a temporary folder, that the test can stop and start again.
///
/// The postmaster runs in the foreground as the test's child (not daemonized by `pg_ctl`: Foundation's `Process`
/// waits for every holder of a descriptor it hands its child, so a daemon would keep it waiting). As root, it runs
/// as the `postgres` user through `setpriv`, which execs rather than forks, so signals reach the postmaster itself.
final class PostgresServer: @unchecked Sendable {
    let folder: URL
    let port: Int
    private var postmaster: Process?

    /// `postgres://blimp@127.0.0.1:port/blimp`.
    var url: String { "postgres://blimp@127.0.0.1:\(self.port)/blimp" }

    /// Runs `body` with a server started in a temporary folder (also given to `body`), and stops it before the folder
    /// is removed, whether `body` threw or not.
    static func withStarted<T>(_ body: (PostgresServer, URL) async throws -> T) async throws -> T {
        try await withTemporaryFolder { folder in
            let server = try await Self.start(in: folder)
            return try await withCleanup { try await body(server, folder) } cleanup: { await server.stop() }
        }
    }

    /// Creates the cluster in a new folder under `parent` and its `blimp` database, and starts it.
    static func start(in parent: URL) async throws -> PostgresServer {
        let folder = parent.appendingPathComponent("pg")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let server = PostgresServer(folder: folder, port: freePort())
        if getuid() == 0 {
            // The postgres user must reach the folder: the temporary folders above it are made private.
            for directory in [parent, folder] { chmod(directory.path, 0o755) }
            guard try await Self.run("/usr/bin/chown", ["postgres:postgres", folder.path]).status == 0 else {
                throw CLIExpectationFailed("cannot give \(folder.path) to the postgres user")
            }
        }
        let initdb = try await Self.run(
            Self.bin("initdb"), ["-D", folder.path, "-U", "blimp", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"], asOwner: true)
        guard initdb.status == 0 else { throw CLIExpectationFailed("initdb failed: \(initdb.output)") }
        try await server.start()
        let created = try await Self.run(Self.bin("createdb"), ["-h", "127.0.0.1", "-p", "\(server.port)", "-U", "blimp", "blimp"])
        guard created.status == 0 else { throw CLIExpectationFailed("createdb failed: \(created.output)") }
        return server
    }

    init(folder: URL, port: Int) {
        self.folder = folder
        self.port = port
    }

    /// Starts the postmaster and waits until it accepts connections.
    func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: getuid() == 0 ? "/usr/bin/setpriv" : Self.bin("postgres"))
        let arguments = [
            "-D", self.folder.path, "-p", "\(self.port)", "-k", self.folder.path, "-c", "listen_addresses=127.0.0.1",
            "-c", "fsync=off", "-c", "max_connections=200",
        ]
        process.arguments = getuid() == 0 ? Self.asPostgres + [Self.bin("postgres")] + arguments : arguments
        let log = self.folder.appendingPathComponent("server.log")
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let logHandle = try FileHandle(forWritingTo: log)
        logHandle.seekToEndOfFile()
        (process.standardInput, process.standardOutput, process.standardError) = (FileHandle.nullDevice, logHandle, logHandle)
        try process.run()
        self.postmaster = process
        for _ in 0..<300 {
            if try await Self.run(Self.bin("pg_isready"), ["-q", "-h", "127.0.0.1", "-p", "\(self.port)"]).status == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CLIExpectationFailed("PostgreSQL did not start: \(self.log.suffix(2000))")
    }

    /// Turns TLS on (`ssl = on`) with `certificates`' server certificate and key, and restarts the server. Plain
    /// connections are still accepted: what a client requires is its own `sslmode`.
    func enableTLS(_ certificates: TestCertificates) async throws {
        for (source, name) in [(certificates.certificate, "server.crt"), (certificates.key, "server.key")] {
            let target = self.folder.appendingPathComponent(name)
            try FileManager.default.copyItem(at: source, to: target)
            chmod(target.path, 0o600)
            if getuid() == 0, try await Self.run("/usr/bin/chown", ["postgres:postgres", target.path]).status != 0 {
                throw CLIExpectationFailed("cannot give \(target.path) to the postgres user")
            }
        }
        let configuration = try FileHandle(forWritingTo: self.folder.appendingPathComponent("postgresql.conf"))
        try configuration.seekToEnd()
        try configuration.write(contentsOf: Data("\nssl = on\n".utf8))
        try configuration.close()
        await self.stop()
        try await self.start()
    }

    /// A fast shutdown (SIGINT: sessions are ended, the server stops at once; another `signal`, another mode), waiting
    /// for the postmaster to exit.
    func stop(signal: Int32 = SIGINT) async {
        guard let postmaster = self.postmaster else { return }
        kill(postmaster.processIdentifier, signal)
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                postmaster.waitUntilExit()
                continuation.resume()
            }
        }
        self.postmaster = nil
    }

    /// The server's log so far.
    var log: String {
        (try? String(contentsOf: self.folder.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
    }

    /// Runs `sql` with psql; its rows, one per line, columns separated by `|`.
    func query(_ sql: String) async throws -> [String] {
        let result = try await Self.run(
            Self.bin("psql"), ["-h", "127.0.0.1", "-p", "\(self.port)", "-U", "blimp", "-d", "blimp", "-v", "ON_ERROR_STOP=1", "-tAc", sql])
        guard result.status == 0 else { throw CLIExpectationFailed("psql failed: \(result.output)") }
        return result.output.split(separator: "\n").map(String.init)
    }

    /// `setpriv`'s arguments for running as the postgres user.
    static let asPostgres = ["--reuid=postgres", "--regid=postgres", "--init-groups", "--"]

    /// The newest installed PostgreSQL's `program`.
    static func bin(_ program: String) -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let newest = versions.compactMap(Int.init).max().map(String.init) ?? "15"
        return "/usr/lib/postgresql/\(newest)/bin/\(program)"
    }

    /// Runs a program to its exit (as the postgres user with `asOwner`, when root); its status and output.
    static func run(_ path: String, _ arguments: [String], asOwner: Bool = false) async throws -> (status: Int32, output: String) {
        let owned = asOwner && getuid() == 0
        return try await ChildProcess.run(owned ? "/usr/bin/setpriv" : path, owned ? Self.asPostgres + [path] + arguments : arguments)
    }
}
