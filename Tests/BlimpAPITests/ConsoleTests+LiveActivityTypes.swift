import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BlimpAPI

/// Live Activity types in the console, over HTTP against a real PostgreSQL: the types page, and compose
/// offering a field per property of the push's type, building the JSON from them and refusing what the type refuses
/// with the API's words before anything is queued.
extension ConsoleTests {
    /// `MatchAttributes`: a team name to start with, and a state with an enum, a score in 0...99, a date and more.
    static let matchType = #"""
        {"attributes": {"type": "object", "properties": {"home_team": {"type": "string", "maxLength": 20}}, "required": ["home_team"]},
         "content_state": {"type": "object", "properties": {
            "status": {"type": "string", "enum": ["scheduled", "live", "final"], "title": "Match status"},
            "home": {"type": "integer", "minimum": 0, "maximum": 99},
            "kickoff": {"type": "number", "format": "date"},
            "note": {"type": ["string", "null"], "maxLength": 40},
            "overtime": {"type": "boolean"},
            "scorers": {"type": "array", "items": {"type": "string"}}},
          "required": ["status", "home", "kickoff"]}}
        """#

    /// Declares `MatchAttributes` and starts `match` as it through the API.
    static func declareAndStart(_ client: any TestClientProtocol, _ harness: APIHarness) async throws {
        #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchType).status == .created)
        let kickoff = Int64(harness.clock.now.timeIntervalSinceReferenceDate) + 3600
        let start = #"""
            {"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "start", "name": "match",
              "attributes_type": "MatchAttributes", "attributes": {"home_team": "Foxes"},
              "content_state": {"status": "scheduled", "home": 0, "kickoff": \#(kickoff)}, "alert": {"title": "Kick-off"}}}}}
            """#
        let answer = try await client.send(.post, "/api/push", harness.master(), start)
        #expect(answer.status == .accepted, "\(answer.body)")
    }

    /// The APNs bodies of the app's queued updates of `match`.
    static func queuedUpdates(_ harness: APIHarness) async throws -> [String] {
        try await harness.database.query(
            "SELECT apns_body FROM pushes WHERE event = 'update' AND activity_name = 'match' ORDER BY accepted_at", logger: TestDatabase.logger
        ).decode(String.self).reduce(into: []) { $0.append($1) }
    }

    @Test func theTypesPageListsDeclaredTypesAndTypesSeenWithoutASchema() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let empty = try await Self.get(client, "\(base)/live-activity-types", cookie: session)
            #expect(empty.status == .ok && empty.text.contains(#"id="no-types""#))

            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), Self.matchType).status == .created)
            let id = try await ServerAPITests.register(client, harness.scores)
            let ms = Int64(harness.clock.now.timeIntervalSince1970 * 1000)
            for (type, token) in [("QuizAttributes", "ab"), ("MatchAttributes", "cd")] {
                let batch = """
                    {"live_activities": [{"action": "set", "type": "start_token", "attributes_type": "\(type)",
                      "token": "\(String(repeating: token, count: 32))", "action_ts_ms": \(ms)}]}
                    """
                let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
                #expect(try await client.send(.put, "/api/channels/sdk/batch/\(id)?platform=ios", appSecret, batch).status == .ok)
            }
            let page = try await Self.get(client, "\(base)/live-activity-types", cookie: session)
            #expect(page.status == .ok)
            #expect(page.text.contains(#"<h2 class="mono">MatchAttributes</h2>"#))
            #expect(page.text.contains("&quot;enum&quot;: [") && page.text.contains("&quot;format&quot;: &quot;date&quot;"))
            #expect(page.text.contains("&quot;home_team&quot;"))
            #expect(page.text.contains("Declared \(AirshipDate.format(harness.clock.now, separator: " ")) UTC"))
            #expect(page.text.contains(#"<ul id="seen-without-schema"><li class="mono">QuizAttributes</li></ul>"#))
            #expect(try await Self.get(client, "\(base)/activities", cookie: session).text.contains("\(base)/live-activity-types"))

            // Another app sees none of it.
            let orders = try await Self.signIn(client, harness.orders)
            let other = try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/live-activity-types", cookie: orders)
            #expect(other.text.contains(#"id="no-types""#) && !other.text.contains("QuizAttributes"))
        }
    }

    @Test func composeOffersAFieldPerPropertyOfTheNamesType() async throws {
        try await APIHarness.run { harness, client in
            try await Self.declareAndStart(client, harness)
            let session = try await Self.signIn(client, harness.scores)
            let compose = "/console/app/\(harness.scores.app.appKey)/compose"

            // An update of a name started as a declared type: its content state's fields.
            let update = try await Self.get(client, "\(compose)?name=match", cookie: session)
            #expect(update.status == .ok)
            #expect(update.text.contains(#"<legend>Content state of MatchAttributes"#))
            #expect(update.text.contains(#"<label for="content_state.status">Match status</label>"#))
            #expect(update.text.contains(
                #"<select id="content_state.status" name="content_state.status"><option value="scheduled" >scheduled</option><option value="live" >live</option>"#))
            #expect(update.text.contains(#"<input id="content_state.home" name="content_state.home" type="number" step="1" min="0" max="99" value="">"#))
            #expect(update.text.contains(#"<input id="content_state.kickoff" name="content_state.kickoff" type="datetime-local" value="">"#))
            #expect(update.text.contains("kickoff: date and time in UTC"))
            #expect(update.text.contains(#"<input id="content_state.note" name="content_state.note" value="" maxlength="40">"#))
            #expect(update.text.contains(#"type="checkbox" id="content_state.overtime" name="content_state.overtime" value="true""#))
            #expect(update.text.contains("scorers: a list: write it in the raw JSON box"))
            #expect(update.text.contains("Raw content state (JSON object; when filled it is sent as written"))
            #expect(!update.text.contains(#"id="attributes.home_team""#))

            // A start names its type: the page shows its attributes' fields too, once asked.
            let csrf = try #require(update.csrf)
            let start = try await Self.post(
                client, compose, cookie: session,
                [("csrf", csrf), ("event", "start"), ("name", "cup-final"), ("attributes_type", "MatchAttributes"), ("action", "fields")])
            #expect(start.status == .ok && !start.text.contains(#"id="form-errors""#))
            #expect(start.text.contains(#"<input id="attributes.home_team" name="attributes.home_team" value="" maxlength="20">"#))
            #expect(start.text.contains(#"id="content_state.status""#))
        }
    }

    @Test func composeRefusesContentTheTypeRefusesAndQueuesNothing() async throws {
        try await APIHarness.run { harness, client in
            try await Self.declareAndStart(client, harness)
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let csrf = try #require(try await Self.get(client, "\(base)/compose", cookie: session).csrf)
            let unix = Int64(harness.clock.now.timeIntervalSince1970)
            let update: [(String, String)] = [("csrf", csrf), ("event", "update"), ("name", "match")]

            // The raw box, with Unix seconds for a date: refused with the path and the API's words.
            for action in ["send", "schedule"] {
                let raw = try await Self.post(
                    client, "\(base)/compose", cookie: session,
                    update + [
                        ("content_state", #"{"status": "live", "home": 1, "kickoff": \#(unix)}"#), ("action", action),
                        ("scheduled_time", Self.wallClock(harness, in: 3600)),
                    ])
                #expect(raw.status == .badRequest, "\(action)")
                #expect(raw.text.contains(#"id="error-content_state""#))
                #expect(raw.text.contains("notification.ios.live_activity.content_state.kickoff: expected a date"))
                #expect(raw.text.contains("it looks like Unix time"))
                #expect(raw.text.contains("(live activity type &#39;MatchAttributes&#39;); the app could not decode it"))
            }

            // The fields, out of range: refused next to the field.
            let fields = try await Self.post(
                client, "\(base)/compose", cookie: session,
                update + [
                    ("content_state.status", "final"), ("content_state.home", "120"), ("content_state.kickoff", Self.wallClock(harness, in: 60)),
                    ("action", "send"),
                ])
            #expect(fields.status == .badRequest)
            #expect(fields.text.contains(#"id="error-content_state.home""#))
            #expect(fields.text.contains("notification.ios.live_activity.content_state.home:"))
            #expect(fields.text.contains(#"value="120""#))
            let notANumber = try await Self.post(
                client, "\(base)/compose", cookie: session,
                update + [("content_state.status", "final"), ("content_state.home", "two"), ("action", "preview")])
            #expect(notANumber.status == .badRequest && notANumber.text.contains(#"id="error-content_state.home""#))

            // A hint naming another type than the name was started as is refused too.
            let hinted = try await Self.post(
                client, "\(base)/compose", cookie: session,
                update + [("attributes_type", "QuizAttributes"), ("content_state", #"{"q": 1}"#), ("action", "send")])
            #expect(hinted.status == .badRequest && hinted.text.contains("was last started as &#39;MatchAttributes&#39;"))

            #expect(try await Self.queuedUpdates(harness).isEmpty)
            #expect(try await Self.apiSchedules(client, harness).isEmpty)
        }
    }

    @Test func aFormFilledUpdateIsQueuedWithTheJSONItsFieldsBuild() async throws {
        try await APIHarness.run { harness, client in
            try await Self.declareAndStart(client, harness)
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let csrf = try #require(try await Self.get(client, "\(base)/compose", cookie: session).csrf)
            let kickoff = Self.wallClock(harness, in: 1800)
            let sent = try await Self.post(
                client, "\(base)/compose", cookie: session,
                [
                    ("csrf", csrf), ("event", "update"), ("name", "match"), ("content_state.status", "live"), ("content_state.home", "2"),
                    ("content_state.kickoff", kickoff), ("content_state.note", ""), ("action", "send"),
                ])
            #expect(sent.status == .seeOther, "\(sent.text)")
            // Seconds since 2001-01-01 (ActivityKit's default), of the wall-clock time read as UTC.
            let seconds = Int64(try #require(AirshipDate.parse(kickoff + ":00")).timeIntervalSinceReferenceDate)
            let bodies = try await Self.queuedUpdates(harness)
            #expect(bodies.count == 1)
            #expect(bodies.first?.contains(#""content-state":{"status":"live","home":2,"kickoff":\#(seconds),"overtime":false}"#) == true, "\(bodies)")

            // The raw box wins when filled.
            let raw = try await Self.post(
                client, "\(base)/compose", cookie: session,
                [
                    ("csrf", csrf), ("event", "update"), ("name", "match"), ("content_state.status", "final"),
                    ("content_state", #"{"status": "final", "home": 3, "kickoff": \#(seconds)}"#), ("action", "send"),
                ])
            #expect(raw.status == .seeOther)
            #expect(try await Self.queuedUpdates(harness).last?.contains(#""content-state":{"status":"final","home":3,"kickoff":\#(seconds)}"#) == true)
        }
    }

    @Test func anAppWithoutTypesComposesAsBefore() async throws {
        try await APIHarness.run { harness, client in
            try await Self.declareAndStart(client, harness)
            let session = try await Self.signIn(client, harness.orders)
            let compose = "/console/app/\(harness.orders.app.appKey)/compose"
            let page = try await Self.get(client, "\(compose)?name=match", cookie: session)
            #expect(page.status == .ok)
            #expect(!page.text.contains(#"id="content_state-fields""#) && page.text.contains(#"id="untyped-note""#))
            #expect(page.text.contains(#"<label for="content_state">Content state (JSON object)</label>"#))
            let sent = try await Self.post(
                client, compose, cookie: session,
                [("csrf", try #require(page.csrf)), ("event", "update"), ("name", "match"), ("content_state", #"{"anything": [1]}"#), ("action", "send")])
            #expect(sent.status == .seeOther)
        }
    }
}
