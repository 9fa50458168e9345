import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import BlimpAPI

extension ConsoleTests {
    /// The console's Events page: the app's events newest first, what devices sent escaped, filtered by type, channel
    /// and push, a bad filter named; another app's events are not found.
    @Test func theEventsPageShowsTheAppsEventsFiltered() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let pushID = try await Self.composeAndSend(client, base: base, cookie: session)
            let channel = UUID().lowercaseString
            try await harness.database.query(
                """
                INSERT INTO events (app_id, type, occurred_at, channel_id, body)
                VALUES (\(harness.scores.app.id), 'TAG_CHANGE', now(), \(channel)::uuid, '{"add": {"device": ["<b>x</b>"]}, "current": {}}')
                """,
                logger: TestDatabase.logger)

            let page = try await Self.get(client, "\(base)/events", cookie: session)
            #expect(page.status == .ok)
            #expect(page.text.contains("id=\"nav-events\""))
            #expect(page.text.contains("PUSH_BODY") && page.text.contains("\(base)/pushes/\(pushID)"))
            #expect(page.text.contains("\(base)/channels/\(channel)"))
            #expect(page.text.contains("&lt;b&gt;x&lt;/b&gt;") && !page.text.contains("<b>x</b>"))
            // Newest first.
            let tagChange = try #require(page.text.range(of: "TAG_CHANGE</td>"))
            let pushBody = try #require(page.text.range(of: "PUSH_BODY</td>"))
            #expect(tagChange.lowerBound < pushBody.lowerBound)

            let byType = try await Self.get(client, "\(base)/events?type=PUSH_BODY", cookie: session)
            #expect(byType.text.contains(pushID) && !byType.text.contains(channel))
            let byChannel = try await Self.get(client, "\(base)/events?channel=\(channel)", cookie: session)
            #expect(byChannel.text.contains(channel) && !byChannel.text.contains("PUSH_BODY</td>"))
            let byPush = try await Self.get(client, "\(base)/events?push=\(pushID)", cookie: session)
            #expect(byPush.text.contains("PUSH_BODY</td>") && !byPush.text.contains("TAG_CHANGE</td>"))
            for bad in ["type=OPEN", "channel=soon", "push=1", "start=x"] {
                let refused = try await Self.get(client, "\(base)/events?\(bad)", cookie: session)
                #expect(refused.status == .badRequest && refused.text.contains("role=\"alert\""), "\(bad)")
            }
            #expect(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/events", cookie: session).status == .notFound)
        }
    }
}

extension ConsoleTests {
    /// The console's Webhooks page: each endpoint's state, backlog and last attempts, as text.
    @Test func theWebhooksPageShowsEachEndpointsStateAndAttempts() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            #expect(try await Self.get(client, "\(base)/webhooks", cookie: session).text.contains("No webhooks."))
            let credentials = "\(harness.scores.app.appKey):\(harness.scores.credentials.masterSecret)"
            let fields = APIHarness.fields([
                ("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()),
                ("Accept", "application/vnd.urbanairship+json; version=3"), ("Content-Type", "application/json"),
            ])
            let created = try await client.send(.post, "/api/webhooks", fields, #"{"url": "https://93.184.216.34/hooks", "types": ["SEND"]}"#)
            #expect(created.status == .created, "\(created.body)")
            try await harness.database.query(
                """
                UPDATE webhooks SET url = 'https://93.184.216.34/hooks?a=<b>', enabled = false, disabled_reason = 'the endpoint answered 410 Gone', delivered_events = 1234,
                    recent_attempts = '[{"at": "2026-11-29T16:00:00.000Z", "batch": "msg_1", "events": 3, "status": 410, "error": "<i>gone</i>"}]'
                """,
                logger: TestDatabase.logger)
            let page = try await Self.get(client, "\(base)/webhooks", cookie: session)
            #expect(page.status == .ok && page.text.contains("id=\"nav-webhooks\""))
            #expect(page.text.contains("https://93.184.216.34/hooks?a=&lt;b&gt;") && !page.text.contains("a=<b>"))
            #expect(page.text.contains("disabled: the endpoint answered 410 Gone") && page.text.contains("1,234 events"))
            #expect(page.text.contains("msg_1") && page.text.contains("&lt;i&gt;gone&lt;/i&gt;") && page.text.contains("<td>410</td>"))
            #expect(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/webhooks", cookie: session).status == .notFound)
        }
    }
}
