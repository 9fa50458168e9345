import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import BlimpAPI

/// `/api/schedules` beyond the Python library's flows (AirshipLibraryTests): another app never sees a schedule, and
/// bad input is Airship's 400 naming the field, never a 5xx.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct ScheduleAPITests {
    static let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "match-1", "content_state": {"home": 1}}}}}"#
    static let tomorrow = AirshipDate.format(Date().addingTimeInterval(86_400))

    static func schedule(_ schedule: String, push: String = Self.push, extra: String = "") -> String {
        #"{"schedule": \#(schedule), "push": \#(push)\#(extra)}"#
    }

    static func recurring(_ recurring: String) -> String {
        Self.schedule(#"{"scheduled_time": "\#(Self.tomorrow)", "recurring": \#(recurring)}"#)
    }

    @Test func aScheduleBelongsToItsApp() async throws {
        try await APIHarness.run { harness, client in
            let created = try await client.send(.post, "/api/schedules/", harness.master(), Self.schedule(#"{"scheduled_time": "\#(Self.tomorrow)"}"#))
            #expect(created.status == .created)
            let url = try #require((created.body["schedule_urls"] as? [String])?.first)
            #expect(url.hasPrefix("\(APIHarness.publicURL)/api/schedules/"))
            let path = String(url.dropFirst(APIHarness.publicURL.count))
            #expect(try await client.send(.get, path, harness.master()).status == .ok)
            for (method, suffix) in [(HTTPRequest.Method.get, ""), (.delete, ""), (.post, "/pause")] {
                let hidden = try await client.send(method, path + suffix, harness.master(harness.orders))
                #expect(hidden.status == .notFound && hidden.body["error_code"] as? Int == 40401, "\(method) \(suffix)")
            }
            #expect(try await client.send(.get, "/api/schedules/not-a-schedule", harness.master()).status == .notFound)
        }
    }

    @Test func badSchedulesAreRefusedWithTheFieldNamed() async throws {
        let exclusions = "[" + Array(repeating: #"{"days_of_week": ["monday"]}"#, count: 10_000).joined(separator: ",") + "]"
        let cases: [(String, String)] = [
            (Self.schedule(#"{"scheduled_time": "2001-01-01T00:00:00"}"#), "schedule.scheduled_time"),
            (Self.schedule(#"{"scheduled_time": "tomorrow"}"#), "schedule.scheduled_time"),
            (Self.schedule(#"{"local_scheduled_time": "\#(Self.tomorrow)", "scheduled_time": "\#(Self.tomorrow)"}"#), "schedule"),
            (Self.schedule(#"{"best_time": {"send_date": "2030-01-01"}}"#), "schedule.best_time"),
            (Self.schedule(#"{"scheduled_time": "\#(Self.tomorrow)"}"#, extra: #", "push_ids": ["x"]"#), "push_ids"),
            (Self.schedule(#"{"scheduled_time": "\#(Self.tomorrow)"}"#, push: "[\(Self.push)]"), "push"),
            (Self.recurring(#"{"cadence": {"type": "hourly", "count": 1000000000000}}"#), "schedule.recurring.cadence.count"),
            (Self.recurring(#"{"cadence": {"type": "fortnightly", "count": 1}}"#), "schedule.recurring.cadence.type"),
            (Self.recurring(#"{"cadence": {"type": "weekly", "count": 1}}"#), "schedule.recurring.cadence.days_of_week"),
            (Self.recurring(#"{"cadence": {"type": "daily", "count": 1}, "exclusions": \#(exclusions)}"#), "schedule.recurring.exclusions"),
            (Self.recurring(#"{"cadence": {"type": "daily", "count": 1}, "exclusions": [{"hour_range": "0-23"}]}"#), "schedule.recurring"),
            (Self.recurring(#"{"cadence": {"type": "daily", "count": 1}, "exclusions": [{"hour_range": "25-3"}]}"#),
             "schedule.recurring.exclusions[0].hour_range"),
            (Self.recurring(#"{"cadence": {"type": "daily", "count": 1}, "end_time": "2001-01-01T00:00:00"}"#), "schedule.recurring.end_time"),
            (Self.schedule(#"{"scheduled_time": "\#(Self.tomorrow)", "recurring": {"cadence": {"type": "daily", "count": 1}}}"#,
                           push: Self.push.replacingOccurrences(of: #""content_state""#, with: #""stale_date": 1900000000, "content_state""#)),
             "push.notification.ios.live_activity.stale_date"),
            (Self.schedule(#"{"scheduled_time": "\#(Self.tomorrow)"}"#, push: #"{"audience": "all"}"#), "push.device_types"),
        ]
        try await APIHarness.run { harness, client in
            for (body, path) in cases {
                let answer = try await client.send(.post, "/api/schedules", harness.master(), body)
                #expect(answer.status == .badRequest, "\(path): \(answer.body)")
                #expect(answer.body["error_code"] as? Int == 40000, "\(path)")
                #expect((answer.body["details"] as? [String: Any])?["path"] as? String == path, "\(path): \(answer.body)")
            }
            let many = "[" + Array(repeating: Self.schedule(#"{"local_scheduled_time": "\#(Self.tomorrow)"}"#), count: 101).joined(separator: ",") + "]"
            #expect(try await client.send(.post, "/api/schedules", harness.master(), many).status == .badRequest)
            let refused = try await client.send(.post, "/api/schedules/create-and-send", harness.master(), "{}")
            #expect(refused.status == .badRequest)
            let listed = try await client.send(.get, "/api/schedules", harness.master())
            #expect((listed.body["schedules"] as? [Any])?.isEmpty == true, "nothing was created: \(listed.body)")
        }
    }
}
