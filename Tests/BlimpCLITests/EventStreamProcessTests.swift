import BlimpTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Airship's own Real-Time Data Streaming client (`uaconnect`, unmodified) reading `POST /api/events` from real
/// processes: three phones' activities becoming active, then pushes to them, each giving its `PUSH_BODY`, three
/// `SEND`s and its `PUSH_FINISHED`, and the last, an end, the activities' `LIVE_ACTIVITY_ENDED`; the client keeps its
/// place while the api is stopped (SIGTERM) and killed (SIGKILL) and started again, and filters by type, channel,
/// push and named user send exactly the matching events (Python/event_stream.py holds the client's side).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct EventStreamProcessTests {
    @Test func airshipsStreamingClientReadsEveryEventThroughRestartsOfTheAPI() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                var deployment = try await ProcessDeployment(database: url, in: folder)
                do {
                    try await Self.run(&deployment, in: folder)
                } catch {
                    Issue.record(error)
                }
                await deployment.stop()
            }
        }
    }

    static func run(_ deployment: inout ProcessDeployment, in folder: URL) async throws {
        let appKey = try #require(deployment.scores["app_key"])
        let issued = try await BlimpProcess.run(
            ["apps", "token", "create", "--app-key", appKey, "--name", "stream"], environment: deployment.environment)
        #expect(issued.status == 0, "\(issued.stderr)")
        var phones: [DeviceAPI.Phone] = []
        for _ in 0..<3 {
            let phone = try await deployment.phones.register(tags: [])
            try await deployment.phones.batch(phone, tags: [:], activity: "final")
            phones.append(phone)
        }
        try await deployment.phones.identify(phones[0].channel, namedUser: "ann")
        let first = try await LiveActivityStateProcessTests.push(deployment, #""event": "update", "name": "final", "content_state": {"home": 1}"#)

        let phases = folder.appendingPathComponent("phases")
        try FileManager.default.createDirectory(at: phases, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/event_stream.py")
        let environment = [
            "BLIMP_URL": deployment.base + "/", "APP_KEY": appKey, "API_TOKEN": issued.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
            "CHANNEL_IDS": phones.map(\.channel).joined(separator: ","), "NAMED_USER": "ann", "FIRST_PUSH": first, "PHASE_DIR": phases.path,
        ]
        let client = Task { try await ChildProcess.python(script.path, environment: environment) }
        for (phase, signal) in [("first", SIGTERM), ("second", SIGKILL)] {
            try await Self.waitFor(phases.appendingPathComponent(phase), or: client)
            let exited = try await deployment.restartAPI(after: signal)
            if signal == SIGTERM { #expect(exited.status == 0, "the api with a stream open: \(exited.stderr.suffix(2000))") }
            // The third push ends the activities.
            let event = signal == SIGTERM ? "update" : "end"
            _ = try await LiveActivityStateProcessTests.push(deployment, #""event": "\#(event)", "name": "final", "content_state": {"home": 2}"#)
        }
        let (status, output) = try await client.value
        #expect(status == 0, "\(output)")
        #expect(output.contains("all flows passed"), "\(output)")
    }

    /// Waits until the client writes `file`; if it does not, fails with what the client said once it exits (it
    /// stops itself after a few minutes).
    static func waitFor(_ file: URL, or client: Task<(status: Int32, output: String), any Error>) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !FileManager.default.fileExists(atPath: file.path), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        guard FileManager.default.fileExists(atPath: file.path) else {
            let (status, output) = try await client.value
            throw CLIExpectationFailed("the stream's client never wrote \(file.lastPathComponent); it exited \(status): \(output)")
        }
    }
}
