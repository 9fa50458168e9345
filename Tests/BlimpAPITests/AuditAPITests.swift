import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BlimpAPI

/// The audit trail through the API: each action the server API takes is one entry with its actor (the master secret,
/// or an API token by name and id) and subject, never a secret; `GET /api/audit` pages and filters it, and refuses bad
/// filters with Airship's 400.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct AuditAPITests {
    /// The app's entries, oldest first, as `GET /api/audit` answers them.
    static func entries(_ client: any TestClientProtocol, _ harness: APIHarness, _ query: String = "") async throws -> [[String: Any]] {
        let answer = try await client.send(.get, "/api/audit?limit=1000\(query)", harness.master())
        #expect(answer.status == .ok)
        return (answer.body["entries"] as? [[String: Any]] ?? []).reversed()
    }

    /// Every audit row's text, to look for secrets in.
    static func everyRow(_ database: Database) async throws -> String {
        try await database.query("SELECT coalesce(string_agg(audit_events::text, ' '), '') FROM audit_events", logger: TestDatabase.logger)
            .decode(String.self).reduce(into: "") { $0 += $1 }
    }

    @Test func everyServerAPIActionIsOneEntryWithItsActorAndSubject() async throws {
        let apns = LiveActivityChannelAPITests.ChannelManagement()
        try await APIHarness.run(broadcastChannels: apns) { harness, client in
            let store = AppStore(client: harness.database, logger: TestDatabase.logger)
            let token = try await store.createToken(appKey: harness.scores.app.appKey, name: "ci")
            let tokenID = try #require(try await store.tokens(appKey: harness.scores.app.appKey).first?.id)
            let bearer = APIHarness.fields([
                ("Authorization", "Bearer \(token)"), ("X-UA-Appkey", harness.scores.app.appKey),
                ("Accept", "application/vnd.urbanairship+json; version=3;"), ("Content-Type", "application/json"),
            ])

            let sent = try await client.send(.post, "/api/push", harness.master(), PushAPITests.update())
            let pushID = try #require((sent.body["push_ids"] as? [String])?.first)
            let byToken = try await client.send(.post, "/api/push", bearer, PushAPITests.update("match-2"))
            let tokenPushID = try #require((byToken.body["push_ids"] as? [String])?.first)
            #expect(try await client.send(.post, "/api/pushes/\(pushID)/cancel", harness.master()).status == .ok)

            let created = try await client.send(
                .post, "/api/schedules", bearer, ScheduleAPITests.schedule(#"{"scheduled_time": "\#(ScheduleAPITests.tomorrow)"}"#, extra: #", "name": "kick-off""#))
            let scheduleID = try #require((created.body["schedule_ids"] as? [String])?.first)
            let replaced = try await client.send(
                .put, "/api/schedules/\(scheduleID)", harness.master(), ScheduleAPITests.schedule(#"{"scheduled_time": "\#(ScheduleAPITests.tomorrow)"}"#))
            #expect(replaced.status == .ok)
            #expect(try await client.send(.post, "/api/schedules/\(scheduleID)/pause", harness.master()).status == .noContent)
            #expect(try await client.send(.post, "/api/schedules/\(scheduleID)/resume", harness.master()).status == .noContent)
            #expect(try await client.send(.delete, "/api/schedules/\(scheduleID)", harness.master()).status == .noContent)

            let schemas = LiveActivityTypeAPITests.matchSchemas
            #expect(try await client.send(.put, "/api/live_activity_types/MatchAttributes", harness.master(), schemas).status == .created)
            #expect(try await client.send(.delete, "/api/live_activity_types/MatchAttributes", harness.master()).status == .noContent)

            let channel = try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "final", "message_storage_policy": 0}"#)
            #expect(channel.status == .created)
            #expect(try await client.send(.delete, "/api/live_activity_channels/final", harness.master()).status == .ok)

            // The token was issued at the command line (by the real clock, not the API's): apart.
            let issued = try await Self.entries(client, harness, "&actor=command_line")
            #expect(issued.map { $0["subject"] as? String } == [harness.scores.app.appKey, "api_token_issued"])
            #expect((issued.last?["details"] as? [String: Any])?["token_id"] as? String == tokenID.lowercaseString)
            let entries = try await Self.entries(client, harness).filter { ($0["actor"] as? [String: Any])?["kind"] as? String != "command_line" }
            let seen = entries.map { entry in
                [entry["action"] as? String ?? "", entry["subject"] as? String ?? "", (entry["actor"] as? [String: Any])?["kind"] as? String ?? ""]
            }
            #expect(seen == [
                ["push.accepted", pushID, "master_secret"],
                ["push.accepted", tokenPushID, "api_token"],
                ["push.cancelled", pushID, "master_secret"],
                ["schedule.created", scheduleID, "api_token"],
                ["schedule.changed", scheduleID, "master_secret"],
                ["schedule.paused", scheduleID, "master_secret"],
                ["schedule.resumed", scheduleID, "master_secret"],
                ["schedule.cancelled", scheduleID, "master_secret"],
                ["live_activity_type.saved", "MatchAttributes", "master_secret"],
                ["live_activity_type.deleted", "MatchAttributes", "master_secret"],
                ["broadcast_channel.created", "final", "master_secret"],
                ["broadcast_channel.deleted", "final", "master_secret"],
            ])
            let tokenActor = try #require(entries[1]["actor"] as? [String: Any])
            #expect(tokenActor["name"] as? String == "ci")
            #expect(tokenActor["token_id"] as? String == tokenID.lowercaseString)
            #expect((entries[3]["details"] as? [String: Any])?["name"] as? String == "kick-off")
            #expect(entries.allSatisfy { $0["address"] is String }, "every API entry has the client's address")
            #expect(entries.allSatisfy { ($0["at"] as? String).flatMap(AirshipDate.parse) != nil })

            // Another app's trail holds none of it: only its own creation.
            let other = try await client.send(.get, "/api/audit", harness.master(harness.orders))
            #expect((other.body["entries"] as? [[String: Any]])?.map { $0["action"] as? String } == ["app.created"])

            // No secret anywhere in the rows.
            let rows = try await Self.everyRow(harness.database)
            for secret in [token, harness.scores.credentials.masterSecret, harness.scores.credentials.appSecret] {
                #expect(!rows.contains(secret))
            }
        }
    }

    @Test func theTrailIsPagedAndFiltered() async throws {
        try await APIHarness.run { harness, client in
            for index in 0..<5 {
                #expect(try await client.send(.post, "/api/push", harness.master(), PushAPITests.update("m-\(index)")).status == .accepted)
            }
            let schedule = ScheduleAPITests.schedule(#"{"scheduled_time": "\#(ScheduleAPITests.tomorrow)"}"#)
            #expect(try await client.send(.post, "/api/schedules", harness.master(), schedule).status == .created)

            var seen: [Int] = []
            var next: String? = "/api/audit?limit=2&action=push.accepted"
            var pages = 0
            while let url = next {
                let page = try await client.send(.get, url.replacingOccurrences(of: APIHarness.publicURL, with: ""), harness.master())
                #expect(page.status == .ok)
                let entries = page.body["entries"] as? [[String: Any]] ?? []
                #expect(entries.allSatisfy { $0["action"] as? String == "push.accepted" })
                seen += entries.compactMap { $0["id"] as? Int }
                next = page.body["next_page"] as? String
                if let next { #expect(page.headers[HTTPField.Name("Link")!]?.contains(next) == true) }
                pages += 1
            }
            #expect(pages == 3)
            #expect(seen.count == 5 && seen == seen.sorted(by: >), "newest first, each once: \(seen)")

            #expect(try await Self.entries(client, harness, "&actor=master_secret").count == 6)
            #expect(try await Self.entries(client, harness, "&actor=nobody@example.com").isEmpty)
            #expect(try await Self.entries(client, harness, "&action=schedule.created").count == 1)
            let future = AirshipDate.format(Date().addingTimeInterval(3600))
            #expect(try await Self.entries(client, harness, "&since=\(future)").isEmpty)
            // With the app's creation.
            #expect(try await Self.entries(client, harness, "&until=\(future)Z").count == 7)
            #expect(try await Self.entries(client, harness, "&since=2020-01-01T00:00:00%2B01:00").count == 7)

            for (query, path) in [
                ("action=push.sent", "action"), ("since=yesterday", "since"), ("until=2026-13-01T00:00:00", "until"),
                ("since=2026-01-02T00:00:00&until=2026-01-01T00:00:00", "until"), ("limit=0", "limit"), ("limit=1001", "limit"),
                ("start=abc", "start"), ("actor=\(String(repeating: "a", count: 300))", "actor"),
            ] {
                let bad = try await client.send(.get, "/api/audit?\(query)", harness.master())
                #expect(bad.status == .badRequest, "\(query)")
                #expect((bad.body["details"] as? [String: Any])?["path"] as? String == path, "\(query)")
            }
            let app = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            #expect(try await client.send(.get, "/api/audit", app).status == .unauthorized)
        }
    }
}
