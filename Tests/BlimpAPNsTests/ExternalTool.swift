import Foundation
import BlimpTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Programs we did not write, run as real processes for the interop tests: their output read into memory, never
/// the test's own (a child holding that open would keep `swift test` waiting).
enum ExternalTool {
    /// Whether every one of `tools` is on `PATH`.
    static func available(_ tools: String...) -> Bool {
        tools.allSatisfy { self.path(of: $0) != nil }
    }

    static func path(of tool: String) -> String? {
        // nghttpd lives in /usr/sbin, which a user's PATH may lack.
        let directories = ((ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin").split(separator: ":")
        return directories.map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `tool` to its end and returns its exit status and standard output (standard error appended).
    static func run(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(try #require(self.path(of: tool), "\(tool) is not installed"), arguments)
    }

    /// Starts a server, its standard error written to `errors` when given; ``stop(_:)`` ends it.
    static func start(_ tool: String, _ arguments: [String], errors: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(self.path(of: tool), "\(tool) is not installed"))
        process.arguments = arguments
        (process.standardInput, process.standardOutput, process.standardError) = (FileHandle.nullDevice, FileHandle.nullDevice, FileHandle.nullDevice)
        if let errors {
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: errors)
        }
        try process.run()
        return process
    }

    static func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A loopback port nothing listens on, from the kernel.
    static func freePort() -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length); return getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until something accepts connections on the loopback `port` (10 s at most).
    static func waitForPort(_ port: Int) async throws {
        for _ in 0..<100 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(socket)
            if connected { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw CancellationError()
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// What `operation` returns, or `nil` when it takes longer than `duration` (the operation is left to finish).
func withTimeoutOrNil<T: Sendable>(_ duration: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(for: duration)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next()!
    }
}
