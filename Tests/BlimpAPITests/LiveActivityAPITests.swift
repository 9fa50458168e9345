import BlimpCore
import BlimpTestSupport
import Foundation
import HummingbirdTesting
import PostgresNIO
import Testing

/// `GET /api/live_activities?name=` and the activities in `GET /api/channels/{id}`: every state the API reports comes
/// from the rows the SDK's batches and the held-push work write.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct LiveActivityAPITests {
    static func token(_ n: Int) -> String { String(format: "%064x", n) }

    @Test func aNameIsCountedByStateAndListedByChannelInPages() async throws {
        try await APIHarness.run { harness, client in
            let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            var channels: [String] = []
            for _ in 0..<3 { channels.append(try await ServerAPITests.register(client, harness.scores)) }
            channels.sort()
            let now = Int64(harness.clock.now.timeIntervalSince1970 * 1000)
            func entry(_ action: String, _ n: Int, at ms: Int64) -> String {
                let token = action == "set" ? #""token": "\#(Self.token(n))", "# : ""
                return #"{"action": "\#(action)", "type": "update_token", "id": "a\#(n)", "name": "match", \#(token)"start_ts_ms": \#(now), "action_ts_ms": \#(ms)}"#
            }
            for (index, channel) in channels.prefix(2).enumerated() {
                let set = try await client.send(.put, "/api/channels/sdk/batch/\(channel)?platform=ios", appSecret,
                                                #"{"live_activities": [\#(entry("set", index, at: now))]}"#)
                #expect(set.status == .ok)
            }
            // The second phone's activity ends on the device; the third awaits the token of a start sent by push.
            let removed = try await client.send(.put, "/api/channels/sdk/batch/\(channels[1])?platform=ios", appSecret,
                                                #"{"live_activities": [\#(entry("remove", 1, at: now + 1))]}"#)
            #expect(removed.status == .ok)
            try await harness.database.query(
                """
                INSERT INTO awaiting_activities (app_id, channel_id, name, start_push_id, sent_at)
                VALUES (\(harness.scores.app.id), \(UUID(uuidString: channels[2])!), 'match', \(UUID()), \(harness.clock.now))
                """, logger: TestDatabase.logger)

            let first = try await client.send(.get, "/api/live_activities?name=match&limit=2", harness.master())
            #expect(first.status == .ok)
            #expect(first.body["counts"] as? [String: Int]
                    == ["awaiting_token": 1, "active": 1, "stale": 0, "ended": 1, "dismissed": 0, "expired": 0])
            let listed = try #require(first.body["channels"] as? [[String: Any]])
            #expect(listed.compactMap { $0["channel_id"] as? String } == Array(channels.prefix(2)))
            let activities = listed.compactMap { $0["live_activity"] as? [String: Any] }
            #expect(activities.map { $0["state"] as? String } == ["active", "ended"])
            #expect(activities.map { $0["ended_by"] as? String } == [nil, "device"])
            #expect(activities.first?["token"] as? String == Self.token(0))
            let next = try #require(first.body["next_page"] as? String)
            #expect(next == "\(APIHarness.publicURL)/api/live_activities?name=match&limit=2&start=\(channels[2])")
            #expect(first.headers[.init("Link")!] == "<\(next)>; rel=\"next\"")

            let second = try await client.send(.get, String(next.dropFirst(APIHarness.publicURL.count)), harness.master())
            #expect(second.status == .ok)
            #expect(second.body["counts"] == nil)
            #expect(second.body["next_page"] == nil)
            let awaiting = try #require((second.body["channels"] as? [[String: Any]])?.first?["live_activity"] as? [String: Any])
            #expect(awaiting["state"] as? String == "awaiting_token")
            #expect(awaiting["token"] is NSNull)
            #expect(awaiting["id"] is NSNull)

            // The channel lookup shows the same activity, without a token.
            let lookup = try await client.send(.get, "/api/channels/\(channels[2])", harness.master())
            let shown = try #require(((lookup.body["channel"] as? [String: Any])?["live_activities"] as? [[String: Any]])?.first)
            #expect((shown["state"] as? String, shown["token"] is NSNull) == ("awaiting_token", true))

            // Another app sees none of them.
            let other = try await client.send(.get, "/api/live_activities?name=match", harness.master(harness.orders))
            #expect((other.body["counts"] as? [String: Int])?.values.reduce(0, +) == 0)
            #expect((other.body["channels"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func badQueriesAreRefusedWithAirshipErrors() async throws {
        try await APIHarness.run { harness, client in
            for uri in ["/api/live_activities", "/api/live_activities?name=", "/api/live_activities?name=m&limit=0",
                        "/api/live_activities?name=m&limit=1001", "/api/live_activities?name=m&start=nope",
                        "/api/live_activities?name=a%00b", "/api/live_activities?name=\(String(repeating: "n", count: 257))"] {
                let answer = try await client.send(.get, uri, harness.master())
                #expect(answer.status == .badRequest, "\(uri)")
                #expect(answer.body["error_code"] as? Int == 40000, "\(uri)")
            }
            let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            #expect(try await client.send(.get, "/api/live_activities?name=m", appSecret).status == .unauthorized)
        }
    }
}
