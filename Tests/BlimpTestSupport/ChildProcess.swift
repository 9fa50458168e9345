import Foundation

/// Programs the tests run to their end: their output (standard output and error together) is read into memory, never
/// the test's own (a child holding that open would keep `swift test` waiting), and the wait happens on a dispatch
/// thread: blocking one of Swift's few cooperative threads while the program calls back into a server in the same
/// process could starve that server.
public enum ChildProcess {
    /// Runs `executable` with `arguments` (and `environment` added to the test's own) and returns its exit status and
    /// output.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        (process.standardInput, process.standardOutput, process.standardError) = (FileHandle.nullDevice, output, output)
        try process.run()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
            }
        }
    }

    /// Runs the Python script at `path` (`python3` from `PATH`).
    public static func python(_ path: String, environment: [String: String]) async throws -> (status: Int32, output: String) {
        try await Self.run("/usr/bin/env", ["python3", path], environment: environment)
    }
}
