import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import BlimpAPI

/// Scheduling from the compose form and the schedules page, over HTTP against a real PostgreSQL: what the form creates
/// is what the schedule API reads back, and the page pauses, resumes and cancels it and links the pushes it fired.
extension ConsoleTests {
    /// A `datetime-local` value `seconds` from the harness's now.
    static func wallClock(_ harness: APIHarness, in seconds: TimeInterval) -> String {
        String(AirshipDate.format(harness.clock.now.addingTimeInterval(seconds)).prefix(16))
    }

    /// An update of `match` and the session's CSRF token: the compose fields every schedule here starts from.
    static func composeFields(_ csrf: String) -> [(String, String)] {
        [("csrf", csrf), ("event", "update"), ("name", "match"), ("content_state", #"{"home": 1}"#), ("action", "schedule")]
    }

    /// The app's schedules as `GET /api/schedules` answers them.
    static func apiSchedules(_ client: any TestClientProtocol, _ harness: APIHarness) async throws -> [[String: Any]] {
        let answer = try await client.send(.get, "/api/schedules", harness.master())
        #expect(answer.status == .ok)
        return try #require(answer.body["schedules"] as? [[String: Any]])
    }

    @Test func composeSchedulesAPushInUTCAndInEachDevicesLocalTime() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let form = try await Self.get(client, "\(base)/compose", cookie: session)
            #expect(form.text.contains(#"id="schedule-button""#) && form.text.contains(#"id="repeat_friday""#))
            let csrf = try #require(form.csrf)
            let utc = Self.wallClock(harness, in: 3600)
            let once = try await Self.post(
                client, "\(base)/compose", cookie: session,
                Self.composeFields(csrf) + [("schedule_clock", "utc"), ("scheduled_time", utc), ("schedule_name", "kick-off")])
            #expect(once.status == .seeOther)
            #expect(once.headers[.location] == "\(base)/schedules")
            let local = Self.wallClock(harness, in: 86_400)
            let end = Self.wallClock(harness, in: 30 * 86_400)
            let weekly = try await Self.post(
                client, "\(base)/compose", cookie: session,
                Self.composeFields(csrf) + [
                    ("schedule_clock", "local"), ("scheduled_time", local), ("schedule_name", "weekly"), ("repeat", "weekly"),
                    ("repeat_count", "2"), ("repeat_monday", "on"), ("repeat_friday", "on"), ("repeat_end", end),
                ])
            #expect(weekly.status == .seeOther)

            // The schedule API reads back what the form made: the same objects as if posted to /api/schedules.
            let schedules = try await Self.apiSchedules(client, harness)
            #expect(schedules.count == 2)
            let first = try #require(schedules.first { $0["name"] as? String == "kick-off" })
            #expect((first["schedule"] as? [String: Any])?["scheduled_time"] as? String == utc + ":00")
            #expect(((first["push"] as? [String: Any])?["device_types"] as? [String]) == ["ios"])
            let second = try #require(schedules.first { $0["name"] as? String == "weekly" })
            let time = try #require(second["schedule"] as? [String: Any])
            #expect(time["local_scheduled_time"] as? String == local + ":00")
            let recurring = try #require(time["recurring"] as? [String: Any])
            #expect(recurring["end_time"] as? String == end + ":00")
            let cadence = try #require(recurring["cadence"] as? [String: Any])
            #expect(cadence["type"] as? String == "weekly" && cadence["count"] as? Int == 2)
            #expect(cadence["days_of_week"] as? [String] == ["monday", "friday"])

            let page = try await Self.get(client, "\(base)/schedules", cookie: session)
            #expect(page.status == .ok)
            #expect(page.text.contains(#"id="nav-schedules" href="\#(base)/schedules" aria-current="page""#))
            #expect(page.text.contains("kick-off") && page.text.contains("weekly"))
            #expect(page.text.contains(utc.replacingOccurrences(of: "T", with: " ") + ":00 UTC"))
            #expect(page.text.contains(local.replacingOccurrences(of: "T", with: " ") + ":00 on each device"))
            #expect(page.text.contains("every 2 weeks on monday, friday until"))
            #expect(!page.text.contains("state-paused"))

            // Another app sees none of them.
            let orders = try await Self.signIn(client, harness.orders)
            #expect(!(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/schedules", cookie: orders).text.contains("kick-off")))
        }
    }

    @Test func schedulesArePausedResumedCancelledAndLinkThePushesTheyFired() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let csrf = try #require(try await Self.get(client, "\(base)/compose", cookie: session).csrf)
            let created = try await Self.post(
                client, "\(base)/compose", cookie: session,
                Self.composeFields(csrf) + [("scheduled_time", Self.wallClock(harness, in: 3600)), ("repeat", "daily"), ("repeat_count", "1")])
            #expect(created.status == .seeOther)
            let id = try #require(try await Self.apiSchedules(client, harness).first?["url"] as? String).split(separator: "/").last.map(String.init)
            let schedule = "\(base)/schedules/\(try #require(id))"
            let lookup = "/api/schedules/\(try #require(id))"

            #expect(try await Self.post(client, "\(schedule)/pause", cookie: session, [("csrf", "not-the-token")]).status == .forbidden)
            let paused = try await Self.post(client, "\(schedule)/pause", cookie: session, [("csrf", csrf)])
            #expect(paused.headers[.location] == "\(base)/schedules")
            #expect(try await client.send(.get, lookup, harness.master()).body["paused"] as? Bool == true)
            let page = try await Self.get(client, "\(base)/schedules", cookie: session)
            #expect(page.text.contains("state-paused") && page.text.contains("\(schedule)/resume") && !page.text.contains("\(schedule)/pause"))

            #expect(try await Self.post(client, "\(schedule)/resume", cookie: session, [("csrf", csrf)]).status == .seeOther)
            #expect(try await client.send(.get, lookup, harness.master()).body["paused"] as? Bool == false)

            // Fired (as a worker fires it), the schedule links its push's report.
            harness.clock.advance(by: 3600 + 60)
            let store = ScheduleStore(client: harness.database, logger: TestDatabase.logger)
            _ = try await store.fireDue(
                now: harness.clock.now, limit: 10, preparation: .init(client: harness.database, logger: TestDatabase.logger))
            let pushID = try #require((try await client.send(.get, lookup, harness.master()).body["push_ids"] as? [String])?.first)
            let fired = try await Self.get(client, "\(base)/schedules", cookie: session)
            #expect(fired.text.contains(#"href="\#(base)/pushes/\#(pushID)""#))
            #expect(try await Self.get(client, "\(base)/pushes/\(pushID)", cookie: session).status == .ok)

            // Another app's session cannot touch it.
            let orders = try await Self.signIn(client, harness.orders)
            let ordersCSRF = try #require(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/schedules", cookie: orders).csrf)
            let foreign = "/console/app/\(harness.orders.app.appKey)/schedules/\(try #require(id))/cancel"
            #expect(try await Self.post(client, foreign, cookie: orders, [("csrf", ordersCSRF)]).status == .notFound)

            #expect(try await Self.post(client, "\(schedule)/cancel", cookie: session, [("csrf", csrf)]).status == .seeOther)
            #expect(try await client.send(.get, lookup, harness.master()).status == .notFound)
            #expect(!(try await Self.get(client, "\(base)/schedules", cookie: session).text.contains(try #require(id))))
            #expect(try await Self.post(client, "\(schedule)/cancel", cookie: session, [("csrf", csrf)]).status == .notFound)
        }
    }

    @Test func composeRefusesABadScheduleNextToTheField() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let compose = "/console/app/\(harness.scores.app.appKey)/compose"
            let csrf = try #require(try await Self.get(client, compose, cookie: session).csrf)
            let soon = Self.wallClock(harness, in: 3600)
            let cases: [(fields: [(String, String)], field: String)] = [
                ([("scheduled_time", Self.wallClock(harness, in: -3600))], "scheduled_time"),
                ([("scheduled_time", "tomorrow at six")], "scheduled_time"),
                ([], "scheduled_time"),
                ([("scheduled_time", soon), ("repeat", "weekly"), ("repeat_count", "1")], "repeat_days"),
                ([("scheduled_time", soon), ("repeat", "daily"), ("repeat_count", "1000000000000")], "repeat_count"),
                ([("scheduled_time", soon), ("repeat", "daily"), ("repeat_count", "two")], "repeat_count"),
                ([("scheduled_time", soon), ("repeat", "fortnightly"), ("repeat_count", "1")], "repeat"),
                ([("scheduled_time", soon), ("repeat", "daily"), ("repeat_count", "1"), ("repeat_end", Self.wallClock(harness, in: 60))], "repeat_end"),
                ([("scheduled_time", soon), ("repeat_end", Self.wallClock(harness, in: 7200))], "repeat_end"),
                ([("scheduled_time", soon), ("repeat", "daily"), ("repeat_count", "1"), ("stale_date", Self.wallClock(harness, in: 7200))], "stale_date"),
            ]
            for (fields, field) in cases {
                let page = try await Self.post(client, compose, cookie: session, Self.composeFields(csrf) + fields)
                #expect(page.status == .badRequest, "\(fields)")
                #expect(page.text.contains(#"id="error-\#(field)""#), "\(fields): \(field)")
                #expect(page.text.contains(#"id="form-errors""#))
            }
            let past = try await Self.post(
                client, compose, cookie: session, Self.composeFields(csrf) + [("scheduled_time", Self.wallClock(harness, in: -3600))])
            #expect(past.text.contains("the time has passed"))
            #expect(past.field("scheduled_time") == Self.wallClock(harness, in: -3600))
            #expect(try await Self.apiSchedules(client, harness).isEmpty)
        }
    }
}
