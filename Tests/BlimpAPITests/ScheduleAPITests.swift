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

    /// A start with `end_after` schedules the end of its name for its audience, in the transaction that queues it.
    @Test func aStartSchedulesItsEnd() async throws {
        let start = #"{"audience": {"tag": "fans"}, "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "start", "name": "match-1", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"}, "content_state": {"home": 0}, "alert": {"title": "Kick-off"}, ENDING}}}}"#
        try await APIHarness.run { harness, client in
            let before = Date()
            let sent = try await client.send(.post, "/api/push", harness.master(), start.replacingOccurrences(of: "ENDING", with: #""end_after": 600"#))
            #expect(sent.status == .accepted, "\(sent.body)")
            let listed = try await client.send(.get, "/api/schedules", harness.master())
            let schedules = try #require(listed.body["schedules"] as? [[String: Any]])
            #expect(schedules.count == 1)
            let schedule = try #require(schedules.first)
            #expect(schedule["name"] as? String == "end of match-1")
            let text = try #require((schedule["schedule"] as? [String: Any])?["scheduled_time"] as? String)
            let time = try #require(AirshipDate.parse(text))
            #expect(time.timeIntervalSince(before) >= 599 && time.timeIntervalSince(Date()) <= 601, "\(time)")
            let push = try #require(schedule["push"] as? [String: Any])
            #expect(push["audience"] as? [String: String] == ["tag": "fans", "group": "device"])
            let activity = ((push["notification"] as? [String: Any])?["ios"] as? [String: Any])?["live_activity"] as? [String: Any]
            #expect(activity?["event"] as? String == "end" && activity?["name"] as? String == "match-1", "\(push)")

            for (ending, path) in [(#""end_at": 1000000000"#, "notification.ios.live_activity.end_at"),
                                   (#""end_after": 86400"#, "notification.ios.live_activity.end_after"),
                                   (#""end_after": 60, "end_at": 1900000000"#, "notification.ios.live_activity")] {
                let refused = try await client.send(.post, "/api/push", harness.master(), start.replacingOccurrences(of: "ENDING", with: ending))
                #expect(refused.status == .badRequest && (refused.body["details"] as? [String: Any])?["path"] as? String == path, "\(ending): \(refused.body)")
            }
            let update = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "match-1", "content_state": {"home": 1}, "end_after": 60}}}}"#
            #expect(try await client.send(.post, "/api/push", harness.master(), update).status == .badRequest)
            #expect((try await client.send(.get, "/api/schedules", harness.master()).body["schedules"] as? [Any])?.count == 1)
        }
    }

    /// A scheduled start's `end_at` is one instant: a one-time UTC schedule's must fall within 12 hours after the
    /// schedule's time; a recurring or local-time schedule takes `end_after` only, which counts from each firing.
    @Test func aScheduledStartsEndAtFallsWithinTwelveHoursOfAOneTimeSchedule() async throws {
        let time = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 86_400).rounded(.down))
        @Sendable func start(_ ending: String) -> String {
            #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "start", "name": "match-1", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"}, "content_state": {"home": 0}, "alert": {"title": "Kick-off"}, \#(ending)}}}}"#
        }
        @Sendable func endAt(_ seconds: TimeInterval) -> String { #""end_at": \#(Int64(time.timeIntervalSince1970 + seconds))"# }
        let once = #"{"scheduled_time": "\#(AirshipDate.format(time))"}"#
        let daily = #"{"scheduled_time": "\#(AirshipDate.format(time))", "recurring": {"cadence": {"type": "daily", "count": 1}}}"#
        let local = #"{"local_scheduled_time": "\#(AirshipDate.format(time))"}"#
        try await APIHarness.run { harness, client in
            for (schedule, ending) in [(once, endAt(60)), (once, endAt(12 * 3600)), (daily, #""end_after": 600"#), (local, #""end_after": 600"#)] {
                let created = try await client.send(.post, "/api/schedules", harness.master(), Self.schedule(schedule, push: start(ending)))
                #expect(created.status == .created, "\(schedule) \(ending): \(created.body)")
            }
            for (schedule, ending) in [(once, endAt(0)), (once, endAt(12 * 3600 + 1)), (once, endAt(-600)), (daily, endAt(60)), (local, endAt(60))] {
                let refused = try await client.send(.post, "/api/schedules", harness.master(), Self.schedule(schedule, push: start(ending)))
                #expect(refused.status == .badRequest, "\(schedule) \(ending): \(refused.body)")
                let path = (refused.body["details"] as? [String: Any])?["path"] as? String
                #expect(path == "push.notification.ios.live_activity.end_at", "\(schedule) \(ending): \(refused.body)")
            }
            #expect((try await client.send(.get, "/api/schedules", harness.master()).body["schedules"] as? [Any])?.count == 4)
        }
    }
}
