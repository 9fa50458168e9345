import AsyncHTTPClient
import BlimpTestSupport
import Foundation
import Testing

/// Held pushes across real processes (`blimp apns-sim`, `blimp api`, `blimp worker`): a phone that was sent a
/// push-to-start reports its activity's token only after an update of the name was sent, and the update reaches it
/// then, through the worker, with the push's report saying so.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct HeldPushProcessTests {
    @Test func anUpdateSentBeforeTheTokenReachesTheActivityWhenItsTokenComes() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let deployment = try await ProcessDeployment(database: url, in: folder)
                let phones = deployment.phones
                let phone = try await phones.register(tags: [])
                let now = Int(Date().timeIntervalSince1970 * 1000)
                let startToken = ConsoleBrowserTests.randomHex(40)
                try await phones.report(
                    phone, [["action": "set", "type": "start_token", "attributes_type": "MatchAttributes", "token": startToken, "action_ts_ms": now]])
                let audience = #"{"ios_channel": "\#(phone.channel)"}"#

                let start = try await Self.push(
                    #"{"event": "start", "name": "match-7", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"}, "content_state": {"home": 0}, "alert": {"title": "Kick-off"}}"#,
                    to: audience, on: deployment)
                #expect(try await Self.counts(of: start, on: deployment, until: \.sent, is: 1) != nil)
                let started = try await Self.deliveries(to: startToken, on: deployment)
                #expect(started.first?.contains(#""activityName":"match-7""#) == true, "\(started)")

                let update = try await Self.push(#"{"event": "update", "name": "match-7", "content_state": {"home": 1}}"#, to: audience, on: deployment)
                let held = try await Self.counts(of: update, on: deployment, until: \.heldAwaitingToken, is: 1)
                #expect(held?.targets == 0)

                // The app wakes and tracks the activity under attributes.activityName: the SDK reports its token.
                try await phones.report(
                    phone,
                    [["action": "set", "type": "update_token", "id": UUID().uuidString, "name": "match-7", "token": phone.token,
                      "start_ts_ms": Int(Date().timeIntervalSince1970 * 1000), "action_ts_ms": Int(Date().timeIntervalSince1970 * 1000)]])
                let delivered = try await Self.counts(of: update, on: deployment, until: \.deliveredAfterToken, is: 1)
                #expect(delivered != nil)
                let received = try await Self.deliveries(to: phone.token, on: deployment)
                #expect(received.count == 1 && received[0].contains(#""content-state":{"home":1}"#), "\(received)")
                await deployment.stop()
            }
        }
    }

    /// Queues a Live Activity push to `audience`; its push id.
    static func push(_ activity: String, to audience: String, on deployment: ProcessDeployment) async throws -> String {
        let (status, body) = try await deployment.request(
            "/api/push",
            posting: #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": \#(activity)}}}"#)
        let answer = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        guard status == 202, let id = (answer?["push_ids"] as? [String])?.first else { throw CLIExpectationFailed("push answered \(status): \(body)") }
        return id
    }

    /// The counts of a push's report this test reads.
    struct Counts: Decodable {
        var targets: Int
        var sent: Int
        var heldAwaitingToken: Int
        var deliveredAfterToken: Int
    }

    /// The push's report counts once it is `done` and `count` is `expected` (nil after 60 s).
    static func counts(
        of pushID: String, on deployment: ProcessDeployment, until count: KeyPath<Counts, Int>, is expected: Int
    ) async throws -> Counts? {
        struct Answer: Decodable {
            struct Report: Decodable {
                var state: String
                var counts: Counts
            }
            var push: Report
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        var last = ""
        for _ in 0..<600 {
            let (_, body) = try await deployment.request("/api/pushes/\(pushID)")
            if let report = try? decoder.decode(Answer.self, from: Data(body.utf8)).push, report.state == "done", report.counts[keyPath: count] == expected {
                return report.counts
            }
            last = body
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the push's report never got there: \(last)")
        return nil
    }

    /// The payloads the simulator's device `token` received, oldest first.
    static func deliveries(to token: String, on deployment: ProcessDeployment) async throws -> [String] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "\(deployment.simulatorAdmin)/devices/\(token)"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let device = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        return (device?["deliveries"] as? [[String: Any]] ?? []).compactMap { $0["payload"] as? String }
    }
}
