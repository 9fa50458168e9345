import Foundation

/// Runs a Python script to completion, waiting on a dispatch thread: a test that blocked one of Swift's few
/// cooperative threads while the script calls back into a server in the same process could starve that server.
public enum PythonScript {
    public static func run(_ path: String, environment: [String: String]) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", path]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, text))
            }
        }
    }
}
