import BlimpTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The built `blimp` executable, run as a real process.
struct BlimpProcess {
    /// The executable: `BLIMP_EXECUTABLE`, else `blimp` beside the test bundle in the build folder.
    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["BLIMP_EXECUTABLE"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("blimp")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        fatalError("no blimp executable near \(CommandLine.arguments[0]); run `swift build` first")
    }()

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    let process = Process()
    private let stdout = Pipe()
    private let stderr = Pipe()

    /// Starts `blimp arguments…` with `environment` as its whole environment (plus PATH), and `input`, when given, as
    /// its whole standard input.
    init(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws {
        self.process.executableURL = Self.executable
        self.process.arguments = arguments
        self.process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine }
        self.process.standardOutput = self.stdout
        self.process.standardError = self.stderr
        let stdin = input.map { _ in Pipe() }
        if let stdin { self.process.standardInput = stdin }
        try self.process.run()
        if let stdin, let input {
            try stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
    }

    /// Sends `signal` (SIGTERM by default).
    func signal(_ signal: Int32 = SIGTERM) {
        kill(self.process.processIdentifier, signal)
    }

    /// Kills the process if it still runs: for a `defer`, so that a test that throws leaves no process behind.
    func killIfRunning() {
        if self.process.isRunning { self.signal(SIGKILL) }
    }

    /// Waits for the exit and collects the output (reading on dispatch threads, off Swift's cooperative pool).
    func wait() async -> Result {
        await withCheckedContinuation { continuation in
            let group = DispatchGroup()
            nonisolated(unsafe) var stdout = Data()
            nonisolated(unsafe) var stderr = Data()
            DispatchQueue.global().async(group: group) { stdout = self.stdout.fileHandleForReading.readDataToEndOfFile() }
            DispatchQueue.global().async(group: group) { stderr = self.stderr.fileHandleForReading.readDataToEndOfFile() }
            group.notify(queue: .global()) {
                self.process.waitUntilExit()
                continuation.resume(
                    returning: Result(
                        status: self.process.terminationStatus,
                        stdout: String(decoding: stdout, as: UTF8.self),
                        stderr: String(decoding: stderr, as: UTF8.self)
                    )
                )
            }
        }
    }

    /// `blimp apps create` for an app "Scores" whose APNs key (key id ABC123DEFG, team DEF123GHIJ) is written to
    /// `folder`; the credentials it printed, and the key file.
    static func createScores(in folder: URL, environment: [String: String]) async throws -> (credentials: [String: String], keyFile: URL) {
        let keyFile = folder.appendingPathComponent("key.p8")
        try TestKeys.p8().write(to: keyFile, atomically: true, encoding: .utf8)
        let created = try await Self.run(
            [
                "apps", "create", "--name", "Scores", "--bundle-id", "com.example.scores", "--apns-key-file", keyFile.path,
                "--apns-key-id", "ABC123DEFG", "--apns-team-id", "DEF123GHIJ", "--apns-environment", "sandbox",
            ],
            environment: environment
        )
        let credentials = try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: String]
        guard created.status == 0, let credentials else { throw CLIExpectationFailed("apps create failed: \(created.stderr)") }
        return (credentials, keyFile)
    }

    /// Runs `blimp arguments…` to completion.
    static func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) async throws -> Result {
        try await BlimpProcess(arguments, environment: environment, input: input).wait()
    }
}

/// Ports already handed out in this run: the kernel may give a closed port out again, and tests run in parallel.
private let handedOut = Mutex<Set<Int>>([])

/// A loopback TCP port that was free a moment ago, and not handed out before in this run.
func freePort() -> Int {
    while true {
        let port = anyFreePort()
        if handedOut.withLock({ $0.insert(port).inserted }) { return port }
    }
}

private func anyFreePort() -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
            _ = bind(socket, address, length)
            _ = getsockname(socket, address, &length)
        }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Runs `body`, then `cleanup` whether `body` threw or not: a `defer` that can await. (A `Task` started in a `defer`
/// runs later: after ``withTemporaryFolder(_:)`` has removed the folder of a server it was to stop, whose files it then
/// leaves behind, with the server running.)
func withCleanup<T>(_ body: () async throws -> T, cleanup: () async -> Void) async throws -> T {
    let result: Result<T, any Error>
    do { result = .success(try await body()) } catch { result = .failure(error) }
    await cleanup()
    return try result.get()
}

/// A temporary folder, removed when `body` returns.
func withTemporaryFolder<T>(_ body: (URL) async throws -> T) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blimp-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try await body(folder)
}
