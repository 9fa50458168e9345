import BlimpTestSupport
import Foundation
import Testing

/// An activity's state through real processes (`blimp api`, `blimp worker`, `blimp apns-sim`), each seen through
/// `GET /api/live_activities`: a phone reports its activity (active), an update goes through the worker to the
/// simulator (its last update shows APNs's answer), an end ends it (by a push) and, past its dismissal date, it is
/// dismissed; and a start sent by push-to-start awaits its token, holding an update, until the phone reports it.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct LiveActivityStateProcessTests {
    @Test func anActivityGoesActiveThenEndedThenDismissed() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let deployment = try await ProcessDeployment(database: url, in: folder)
                do {
                    try await Self.run(deployment)
                } catch {
                    Issue.record(error)
                }
                await deployment.stop()
            }
        }
    }

    @Test func aStartByPushAwaitsItsTokenThenGoesActive() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let deployment = try await ProcessDeployment(database: url, in: folder)
                do {
                    try await Self.awaitToken(deployment)
                } catch {
                    Issue.record(error)
                }
                await deployment.stop()
            }
        }
    }

    static func awaitToken(_ deployment: ProcessDeployment) async throws {
        let phone = try await deployment.phones.register(tags: [])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await deployment.phones.report(phone, [
            ["action": "set", "type": "start_token", "attributes_type": "MatchAttributes", "token": phone.token, "action_ts_ms": now]
        ])
        let start = try await Self.push(deployment, """
            "event": "start", "name": "final", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"},
            "content_state": {"home": 0}, "alert": {"title": "Kick-off", "body": "Foxes v Tigers"}
            """)
        var (counts, activity) = try await Self.activity(deployment)
        #expect(counts["awaiting_token"] == 1, "\(counts)")
        #expect((activity["state"] as? String, activity["token"] is NSNull) == ("awaiting_token", true), "\(activity)")
        var last = try #require(activity["last_update"] as? [String: Any], "\(activity)")
        #expect((last["push_id"] as? String, last["event"] as? String, last["status"] as? Int) == (start, "start", 200))

        // An update meanwhile is held for the activity.
        let update = try await Self.push(deployment, #""event": "update", "name": "final", "content_state": {"home": 1}"#)
        (counts, activity) = try await Self.activity(deployment)
        #expect(activity["state"] as? String == "awaiting_token")
        #expect((activity["held_push"] as? [String: Any])?["push_id"] as? String == update, "\(activity)")

        // The phone reports the started activity's token: the held update goes out to it.
        let token = ConsoleBrowserTests.randomHex(32)
        try await deployment.phones.report(phone, [
            ["action": "set", "type": "update_token", "id": UUID().uuidString, "name": "final", "token": token,
             "start_ts_ms": Int64(Date().timeIntervalSince1970 * 1000), "action_ts_ms": Int64(Date().timeIntervalSince1970 * 1000)]
        ])
        let deadline = ContinuousClock.now + .seconds(60)
        while (activity["last_update"] as? [String: Any])?["push_id"] as? String != update, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            (counts, activity) = try await Self.activity(deployment)
        }
        #expect((activity["state"] as? String, activity["token"] as? String) == ("active", token), "\(activity)")
        last = try #require(activity["last_update"] as? [String: Any], "\(activity)")
        #expect((last["push_id"] as? String, last["event"] as? String, last["status"] as? Int) == (update, "update", 200))
        #expect(counts["active"] == 1 && counts["awaiting_token"] == 0, "\(counts)")
    }

    static func run(_ deployment: ProcessDeployment) async throws {
        let phone = try await deployment.phones.register(tags: [])
        try await deployment.phones.batch(phone, tags: [:], activity: "final")
        var (counts, activity) = try await Self.activity(deployment)
        #expect(counts["active"] == 1)
        #expect(activity["state"] as? String == "active")
        #expect(activity["token"] as? String == phone.token)
        #expect(activity["last_update"] is NSNull)

        let update = try await Self.push(deployment, #""event": "update", "name": "final", "priority": 10, "content_state": {"home": 1}"#)
        (counts, activity) = try await Self.activity(deployment)
        var last = try #require(activity["last_update"] as? [String: Any], "\(activity)")
        #expect(last["push_id"] as? String == update)
        #expect((last["event"] as? String, last["status"] as? Int, last["priority"] as? Int) == ("update", 200, 10))
        #expect((last["apns_id"] as? String)?.count == 36)
        #expect(activity["priority_10_sends_this_hour"] as? Int == 1)
        #expect(activity["state"] as? String == "active")

        // Far enough ahead that a loaded machine still reads `ended` first; then the test waits for `dismissed`.
        let dismissal = Int(Date().timeIntervalSince1970) + 15
        let end = try await Self.push(
            deployment, #""event": "end", "name": "final", "content_state": {"home": 2}, "dismissal_date": \#(dismissal)"#)
        (counts, activity) = try await Self.activity(deployment)
        last = try #require(activity["last_update"] as? [String: Any], "\(activity)")
        #expect((last["push_id"] as? String, last["event"] as? String, last["status"] as? Int) == (end, "end", 200))
        #expect((activity["state"] as? String, activity["ended_by"] as? String) == ("ended", "push"))
        #expect(counts["ended"] == 1)

        let deadline = ContinuousClock.now + .seconds(60)
        while activity["state"] as? String == "ended", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            (counts, activity) = try await Self.activity(deployment)
        }
        #expect(activity["state"] as? String == "dismissed")
        #expect(counts["dismissed"] == 1 && counts["ended"] == 0)
    }

    /// The name's counts and the phone's activity, from the listing's first page.
    static func activity(_ deployment: ProcessDeployment) async throws -> (counts: [String: Int], activity: [String: Any]) {
        let (status, text) = try await deployment.request("/api/live_activities?name=final")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(status): \(text)")
        let counts = try #require(answer["counts"] as? [String: Int], "\(text)")
        let channels = try #require(answer["channels"] as? [[String: Any]], "\(text)")
        #expect(channels.count == 1, "\(text)")
        return (counts, try #require(channels.first?["live_activity"] as? [String: Any], "\(text)"))
    }

    /// Sends a Live Activity push to everyone and waits until a worker has finished it; returns its id.
    static func push(_ deployment: ProcessDeployment, _ liveActivity: String) async throws -> String {
        let body = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {\#(liveActivity)}}}}"#
        let (status, answer) = try await deployment.request("/api/push", posting: body)
        let pushID = String(try #require(answer.firstMatch(of: /"push_ids":\["([0-9a-f-]{36})"/)?.1, "\(status): \(answer)"))
        let deadline = ContinuousClock.now + .seconds(60)
        while try await !deployment.request("/api/pushes/\(pushID)").1.contains(#""state":"done""#), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let report = try await deployment.request("/api/pushes/\(pushID)").1
        #expect(report.contains(#""state":"done""#), "\(report)")
        return pushID
    }
}
