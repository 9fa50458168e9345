import BlimpTestSupport
import Foundation
import NIOHTTP1
import PostgresNIO
import Testing

/// Live activity channels end to end with real processes: `blimp api` creates channels at `blimp apns-sim`'s channel
/// management, a start to push-to-start tokens subscribes each new activity with `input-push-channel`, `blimp worker`
/// publishes an update once to every subscriber (besides the one device that tracks an update token) and an end, after
/// which it deletes the channel; and the Push API's refusals: an audience other than all, a payload over 5,120 bytes,
/// the channel limit, and a name whose channel APNs no longer knows.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct BroadcastProcessTests {
    static let subscribers = 20

    @Test func aChannelBackedNameIsPublishedOnceToEverySubscriber() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let deployment = try await ProcessDeployment(database: url, in: folder, simulatorArguments: ["--channel-limit", "2"])
                // Push-to-start tokens of MatchAttributes on 20 channels, and one more channel tracking "final" by its update token.
                try await client.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO channels (app_id, channel_id, opt_in) SELECT 1, md5('b/' || i)::uuid, true FROM generate_series(0, \(Self.subscribers)) i;
                    """), logger: TestDatabase.logger)
                try await client.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO push_to_start_tokens (app_id, channel_id, attributes_type, token, action_ts_ms)
                        SELECT 1, md5('b/' || i)::uuid, 'MatchAttributes', md5('s' || i) || md5('start' || i), 1 FROM generate_series(1, \(Self.subscribers)) i;
                    """), logger: TestDatabase.logger)
                let tracked = String(repeating: "ab", count: 32)
                try await client.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO live_activities (app_id, channel_id, name, activity_id, token, state, started_at, action_ts_ms)
                        VALUES (1, md5('b/0')::uuid, 'final', 'a0', '\(tracked)', 'active', now(), 1);
                    """), logger: TestDatabase.logger)

                // Channels through APNs's channel management, up to the simulator's limit of 2.
                let created = try await deployment.json("/api/live_activity_channels", posting: #"{"name": "final", "message_storage_policy": 0}"#)
                #expect(created.status == 201)
                let channelID = try #require((created.body["live_activity_channel"] as? [String: Any])?["apns_channel_id"] as? String)
                #expect(try await deployment.json("/api/live_activity_channels", posting: #"{"name": "final", "message_storage_policy": 1}"#).status == 409)
                let semi = try await deployment.json("/api/live_activity_channels", posting: #"{"name": "semi", "message_storage_policy": "most_recent"}"#)
                #expect(semi.status == 201)
                let limit = try await deployment.json("/api/live_activity_channels", posting: #"{"name": "third", "message_storage_policy": 0}"#)
                #expect(limit.status == 400)
                #expect(((limit.body["details"] as? [String: Any])?["error"] as? String)?.contains("CannotCreateChannelConfig") == true, "\(limit.body)")
                let simulated = try await deployment.simulatedChannels()
                #expect(simulated.count == 2, "\(simulated)")

                // The start subscribes every new activity to the channel.
                let start = try await deployment.push(Self.push("start", "final"))
                try await deployment.waitUntilFinished(start)
                let startReport = try await deployment.report(start)
                #expect((startReport["counts"] as? [String: Any])?["sent"] as? Int == Self.subscribers, "\(startReport)")
                #expect((startReport["live_activity_channel"] as? [String: Any])?["path"] as? String == "input_push_channel")
                let startTokens = try await client.query(
                    "SELECT token FROM push_to_start_tokens WHERE app_id = 1 ORDER BY token", logger: TestDatabase.logger
                ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
                for token in startTokens {
                    let device = try await deployment.simulator("/devices/\(token)")
                    #expect(device["channel_id"] as? String == channelID, "\(device)")
                }

                // What a broadcast cannot do is refused.
                let tagged = try await deployment.json("/api/push", posting: Self.push("update", "final", audience: #"{"tag": "fans"}"#))
                #expect(tagged.status == 400)
                #expect(((tagged.body["details"] as? [String: Any])?["error"] as? String)?.contains("every subscribed device") == true)
                let large = #"{"text": "\#(String(repeating: "x", count: 5200))"}"#
                #expect(try await deployment.json("/api/push", posting: Self.push("update", "final", contentState: large)).status == 400)

                // An update is published once: every subscriber gets it, and the tracked token gets it as ever.
                let update = try await deployment.push(Self.push("update", "final", contentState: #"{"home": 2}"#))
                try await deployment.waitUntilFinished(update)
                let report = try await deployment.report(update)
                let path = try #require(report["live_activity_channel"] as? [String: Any], "\(report)")
                #expect(path["path"] as? String == "publish" && path["status"] as? Int == 200 && path["apns_channel_id"] as? String == channelID)
                let requestID = try #require(path["apns_request_id"] as? String)
                let counts = try #require(report["counts"] as? [String: Any])
                #expect(counts["targets"] as? Int == 1 && counts["sent"] as? Int == 1, "\(counts)")
                for token in startTokens {
                    let deliveries = try #require(try await deployment.simulator("/devices/\(token)")["deliveries"] as? [[String: Any]])
                    let published = deliveries.filter { $0["channel_id"] as? String == channelID }
                    #expect(published.count == 1, "\(deliveries)")
                    #expect((published.first?["apns_id"] as? String)?.lowercased() == requestID)
                }
                let trackedDeliveries = try #require(try await deployment.simulator("/devices/\(tracked)")["deliveries"] as? [[String: Any]])
                #expect(trackedDeliveries.count == 1 && trackedDeliveries.first?["channel_id"] == nil)
                let channels = try await deployment.simulatedChannels()
                let final = try #require(channels.first { $0["id"] as? String == channelID })
                #expect(final["publishes"] as? Int == 1 && final["subscribers"] as? Int == Self.subscribers, "\(final)")

                // An end through the channel deletes it, at APNs and on record.
                let end = try await deployment.push(Self.push("end", "final"))
                try await deployment.waitUntilFinished(end)
                #expect((try await deployment.report(end)["live_activity_channel"] as? [String: Any])?["status"] as? Int == 200)
                let left = try await deployment.simulatedChannels()
                #expect(!left.contains { $0["id"] as? String == channelID }, "\(left)")
                let listed = try await deployment.json("/api/live_activity_channels?include_deleted=true")
                let record = try #require((listed.body["live_activity_channels"] as? [[String: Any]])?.first { $0["name"] as? String == "final" })
                #expect(record["deleted_by"] as? String == "ended", "\(record)")
                #expect(try await deployment.json("/api/live_activity_channels").body["live_activity_channels"].map { ($0 as? [Any])?.count } == 1)

                // A channel APNs no longer knows: the publish is recorded as refused, the channel deleted by APNs, and the
                // name refused until acknowledged.
                _ = try await deployment.request("/reset", posting: "", baseURL: deployment.simulatorAdmin)
                let lost = try await deployment.push(Self.push("update", "semi"))
                try await deployment.waitUntilFinished(lost)
                let lostPath = try #require(try await deployment.report(lost)["live_activity_channel"] as? [String: Any])
                #expect(lostPath["status"] as? Int == 400 && lostPath["reason"] as? String == "ChannelNotRegistered", "\(lostPath)")
                let refused = try await deployment.json("/api/push", posting: Self.push("update", "semi"))
                #expect(refused.status == 409)
                #expect(((refused.body["details"] as? [String: Any])?["error"] as? String)?.contains("APNs no longer knows") == true)
                #expect(try await deployment.json("/api/live_activity_channels/semi", method: .DELETE).status == 200)
                #expect(try await deployment.json("/api/push", posting: Self.push("update", "semi")).status == 202)
                await deployment.stop()
            }
        }
    }

    static func push(_ event: String, _ name: String, audience: String = #""all""#, contentState: String = #"{"home": 1}"#) -> String {
        let start = event == "start" ? #", "attributes_type": "MatchAttributes", "attributes": {"match": "final"}, "alert": {"title": "Kick-off"}"# : ""
        return #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "\#(event)", "name": "\#(name)", "content_state": \#(contentState)\#(start)}}}}"#
    }
}

extension ProcessDeployment {
    /// A request's status and JSON body.
    func json(_ path: String, posting body: String? = nil, method: HTTPMethod? = nil) async throws -> (status: Int, body: [String: Any]) {
        let (status, text) = try await self.request(path, posting: body, method: method)
        return (status, (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:])
    }

    /// Queues a push: its id.
    func push(_ body: String) async throws -> String {
        let answer = try await self.json("/api/push", posting: body)
        guard answer.status == 202, let id = (answer.body["push_ids"] as? [String])?.first else {
            throw CLIExpectationFailed("push refused: \(answer.status) \(answer.body)")
        }
        return id
    }

    /// The push's report.
    func report(_ id: String) async throws -> [String: Any] {
        let push = try await self.json("/api/pushes/\(id)").body["push"] as? [String: Any]
        return try #require(push)
    }

    /// Waits until the push is done (or failed: the test's expectations then say what went wrong).
    func waitUntilFinished(_ id: String) async throws {
        for _ in 0..<600 {
            let state = try await self.report(id)["state"] as? String
            if state != "queued" && state != "sending" { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("push \(id) never finished")
    }

    /// The simulator's broadcast channels (its admin endpoint's `GET /channels`).
    func simulatedChannels() async throws -> [[String: Any]] {
        let (_, text) = try await get(self.simulatorAdmin + "/channels")
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? []
    }

    /// A JSON object from the simulator's admin endpoint.
    func simulator(_ path: String) async throws -> [String: Any] {
        let (_, text) = try await get(self.simulatorAdmin + path)
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }
}
