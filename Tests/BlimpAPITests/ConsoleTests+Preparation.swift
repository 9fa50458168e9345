import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BlimpAPI

/// Every path that accepts pushes prepares them one way (``PushPreparation``): the API, the schedule API, the console's
/// compose (sent or scheduled) and a schedule's firing refuse the same bad push with the same words, and compose starts
/// an activity that ends after the minutes it names, as the API's `end_after` does.
extension ConsoleTests {
    @Test func theAPIComposeAndSchedulesRefuseABadPushWithTheSameWords() async throws {
        try await APIHarness.run { harness, client in
            let now = harness.clock.now
            // A tagged update of a name that a live activity channel backs: published once to every subscriber, it
            // must go to all.
            let update = #"{"audience": {"tag": "fans", "group": "device"}, "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "final", "content_state": {"home": 1}}}}}"#
            let schedule = #"{"schedule": {"scheduled_time": "\#(AirshipDate.format(now.addingTimeInterval(60)))"}, "push": \#(update)}"#
            // Created before the name had its channel, this schedule meets the rule when it fires.
            #expect(try await client.send(.post, "/api/schedules", harness.master(), schedule).status == .created)
            try await harness.database.query(
                """
                INSERT INTO live_activity_channels (app_id, name, apns_channel_id, storage_policy, created_at)
                VALUES (\(harness.scores.app.id), 'final', 'live-channel', 0, \(now))
                """,
                logger: TestDatabase.logger)

            var words: [String: String] = [:]
            func error(_ answer: (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields)) -> String? {
                #expect(answer.status == .badRequest, "\(answer.body)")
                return (answer.body["details"] as? [String: Any])?["error"] as? String
            }
            words["api"] = error(try await client.send(.post, "/api/push", harness.master(), update))
            words["api validate"] = error(try await client.send(.post, "/api/push/validate", harness.master(), update))
            words["schedule api"] = error(try await client.send(.post, "/api/schedules", harness.master(), schedule))

            let session = try await Self.signIn(client, harness.scores)
            let compose = "/console/app/\(harness.scores.app.appKey)/compose"
            let csrf = try #require(try await Self.get(client, compose, cookie: session).csrf)
            let fields = [
                ("csrf", csrf), ("event", "update"), ("name", "final"), ("content_state", #"{"home": 1}"#),
                ("aud_kind_0", "tag"), ("aud_group_0", "device"), ("aud_value_0", "fans"), ("scheduled_time", Self.wallClock(harness, in: 3600)),
            ]
            for action in ["preview", "send", "schedule"] {
                let page = try await Self.post(client, compose, cookie: session, fields + [("action", action)])
                #expect(page.status == .badRequest, "\(action)")
                words["compose \(action)"] = Self.fieldError("audience", in: page.text).map { String($0.dropFirst("audience: ".count)) }
            }

            let store = ScheduleStore(client: harness.database, logger: TestDatabase.logger)
            _ = try await store.fireDue(
                now: now.addingTimeInterval(61), limit: 10, preparation: .init(client: harness.database, logger: TestDatabase.logger))
            let skipped = try await harness.database.query("SELECT skipped FROM schedule_firings", logger: TestDatabase.logger)
                .decode(String?.self).reduce(into: []) { $0.append($1) }
            words["schedule firing"] = skipped.first??.replacingOccurrences(of: "refused: ", with: "")

            #expect(words.count == 7 && Set(words.values).count == 1, "\(words)")
            #expect(words["api"]?.contains(#"so the audience must be "all""#) == true, "\(words)")
        }
    }

    @Test func composeStartsAnActivityThatEndsAfterItsMinutes() async throws {
        try await APIHarness.run { harness, client in
            // One device with a push-to-start token of the type: the preview reaches 1 token.
            let channel = try await ServerAPITests.register(client, harness.scores)
            let batch = #"""
                {"live_activities": [{"action": "set", "type": "start_token", "attributes_type": "MatchAttributes",
                  "token": "\#(String(repeating: "ab", count: 32))", "action_ts_ms": \#(Int64(harness.clock.now.timeIntervalSince1970 * 1000))}]}
                """#
            let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            #expect(try await client.send(.put, "/api/channels/sdk/batch/\(channel)?platform=ios", appSecret, batch).status == .ok)

            let session = try await Self.signIn(client, harness.scores)
            let compose = "/console/app/\(harness.scores.app.appKey)/compose"
            let csrf = try #require(try await Self.get(client, compose, cookie: session).csrf)
            let start = [
                ("csrf", csrf), ("event", "start"), ("name", "match"), ("attributes_type", "MatchAttributes"),
                ("attributes", #"{"home_team": "Foxes"}"#), ("content_state", #"{"home": 0}"#), ("alert_title", "Kick-off"),
            ]
            let shown = try await Self.get(client, compose, cookie: session)
            #expect(shown.text.contains(#"<input id="end_after" name="end_after""#))
            for bad in ["0", "721", "90.5", "soon"] {
                let refused = try await Self.post(client, compose, cookie: session, start + [("end_after", bad), ("action", "preview")])
                #expect(refused.status == .badRequest && Self.fieldError("end_after", in: refused.text) != nil, "\(bad)")
            }
            let preview = try await Self.post(client, compose, cookie: session, start + [("end_after", "90"), ("action", "preview")])
            #expect(preview.status == .ok)
            #expect(preview.text.contains(#"<span id="audience-count">1</span> token</dd>"#))

            let before = harness.clock.now
            let sent = try await Self.post(client, compose, cookie: session, start + [("end_after", "90"), ("action", "send")])
            #expect(sent.status == .seeOther, "\(sent.text)")
            let schedules = try await Self.apiSchedules(client, harness)
            #expect(schedules.count == 1 && schedules.first?["name"] as? String == "end of match", "\(schedules)")
            let text = try #require((schedules.first?["schedule"] as? [String: Any])?["scheduled_time"] as? String)
            let time = try #require(AirshipDate.parse(text))
            #expect(time.timeIntervalSince(before) >= 5400 && time.timeIntervalSince(before) <= 5401, "\(text)")
        }
    }

    /// The text of the form's error next to `field`, unescaped.
    static func fieldError(_ field: String, in page: String) -> String? {
        guard let start = page.range(of: #"id="error-\#(field)" class="field-error">"#) else { return nil }
        let text = page[start.upperBound...].prefix { $0 != "<" }
        return [("&quot;", "\""), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")].reduce(String(text)) {
            $0.replacingOccurrences(of: $1.0, with: $1.1)
        }
    }
}
