import BlimpTestSupport
import Foundation
import Testing

/// Webhooks between real processes: an endpoint that is down when events happen gets them all once it comes up,
/// each delivery verified by the `standardwebhooks` library (Python/webhook_receiver.py) with the secret it was created
/// with and the one a rotation issued, both signing for a day; a 410 disables it.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct WebhookProcessTests {
    @Test func anEndpointThatComesBackGetsEverythingAndA410DisablesIt() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let environment = ["BLIMP_WEBHOOKS_ALLOW_PRIVATE": "1", "BLIMP_WEBHOOK_RETRY_DELAYS": "1s"]
                let deployment = try await ProcessDeployment(database: url, in: folder, environment: environment)
                do {
                    try await Self.run(deployment)
                } catch {
                    Issue.record(error)
                }
                await deployment.stop()
            }
        }
    }

    static func run(_ deployment: ProcessDeployment) async throws {
        let port = freePort()
        let (status, created) = try await deployment.request("/api/webhooks", posting: #"{"url": "http://127.0.0.1:\#(port)/hooks"}"#)
        #expect(status == 201, "\(created)")
        let secret = String(try #require(created.firstMatch(of: /"secret":"(whsec_[^"]+)"/)?.1, "\(created)"))
        // A new secret: for a day the old one signs beside it, and the receiver checks each delivery with both.
        let id = String(try #require(created.firstMatch(of: /"id":"([0-9a-f-]{36})"/)?.1))
        let rotated = try await deployment.request("/api/webhooks/\(id)/rotate", posting: "")
        let newSecret = String(try #require(rotated.1.firstMatch(of: /"secret":"(whsec_[^"]+)"/)?.1, "\(rotated)"))
        #expect(newSecret != secret)

        // Three phones' activities and a push to them, while nothing listens on the endpoint's port.
        for _ in 0..<3 {
            let phone = try await deployment.phones.register(tags: [])
            try await deployment.phones.batch(phone, tags: [:], activity: "final")
        }
        let pushID = try await LiveActivityStateProcessTests.push(deployment, #""event": "update", "name": "final", "content_state": {"home": 1}"#)
        let deadline = ContinuousClock.now + .seconds(60)
        while try await !deployment.request("/api/webhooks").1.contains(#""failed_attempts":2"#), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        let failing = try await deployment.request("/api/webhooks").1
        #expect(failing.contains(#""failed_attempts":2"#) && failing.contains(#""enabled":true"#), "\(failing)")

        // The endpoint comes up: everything from before, in order, verified; then its 410 disables it.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/webhook_receiver.py")
        let receiver = Task { try await ChildProcess.python(script.path, environment: ["PORT": "\(port)", "SECRETS": "\(secret),\(newSecret)", "EXPECT": "8"]) }
        // Once the eight are delivered, one more push: its events are answered 410.
        let delivered = ContinuousClock.now + .seconds(60)
        while try await !deployment.request("/api/webhooks").1.contains(#""delivered_events":8"#), ContinuousClock.now < delivered {
            try await Task.sleep(for: .milliseconds(200))
        }
        _ = try await LiveActivityStateProcessTests.push(deployment, #""event": "update", "name": "final", "content_state": {"home": 2}"#)
        let (exit, output) = try await receiver.value
        #expect(exit == 0, "\(output)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        let events = try #require(summary["events"] as? [[String: String]])
        #expect(events.prefix(8).map { $0["type"]! } == ["LIVE_ACTIVITY_ACTIVE", "LIVE_ACTIVITY_ACTIVE", "LIVE_ACTIVITY_ACTIVE", "PUSH_BODY", "SEND", "SEND", "SEND", "PUSH_FINISHED"],
                "\(events)")
        let offsets = events.compactMap { $0["offset"].flatMap { Decimal(string: $0) } }
        #expect(offsets == offsets.sorted(), "in offset order: \(offsets)")
        #expect(!pushID.isEmpty)

        var listed = try await deployment.request("/api/webhooks").1
        let disabledBy = ContinuousClock.now + .seconds(30)
        while !listed.contains(#""enabled":false"#), ContinuousClock.now < disabledBy {
            try await Task.sleep(for: .milliseconds(200))
            listed = try await deployment.request("/api/webhooks").1
        }
        #expect(listed.contains(#""enabled":false"#) && listed.contains("410 Gone") && listed.contains(#""last_status":410"#), "\(listed)")
        // Its attempts, newest first: the 410, the deliveries of the eight, and the failures while it was down.
        let attempts = try #require(listed.firstMatch(of: /"recent_attempts":(\[.*?\])/)?.1, "\(listed)")
        let statuses = try #require(try JSONSerialization.jsonObject(with: Data(attempts.utf8)) as? [[String: Any]]).map { $0["status"] as? Int }
        let accepted = statuses.dropFirst().prefix { $0 == 204 }
        let down = statuses.dropFirst(1 + accepted.count)
        #expect(statuses.first == 410 && !accepted.isEmpty && down.count >= 2 && down.allSatisfy { $0 == nil }, "\(attempts)")
        #expect(listed.contains(#""backlog_events":5"#), "the second push's five events are left: \(listed)")
    }
}
