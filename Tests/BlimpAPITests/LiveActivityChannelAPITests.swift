import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Synchronization
import Testing

@testable import BlimpAPI

/// `/api/live_activity_channels` over a channel-management stand-in, and the Push API's rules for a name backed by a
/// live activity channel. The end-to-end path through APNs's simulator is in BlimpCLITests (BroadcastProcessTests).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct LiveActivityChannelAPITests {
    /// APNs's channel management as a test needs it: channel ids handed out in order, or the answer it is told.
    final class ChannelManagement: APNsBroadcastChannels {
        let failure = Mutex<APNsBroadcastError?>(nil)
        let live = Mutex<[String]>([])
        let deleted = Mutex<[String]>([])

        func create(
            storagePolicy: APNsMessageStoragePolicy, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
        ) async throws(APNsBroadcastError) -> String {
            if let failure = self.failure.withLock({ $0 }) { throw failure }
            return self.live.withLock { live in
                live.append("Y2hhbm5lbC0\(live.count)==")
                return live.last!
            }
        }

        func storagePolicy(
            of channelID: String, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
        ) async throws(APNsBroadcastError) -> APNsMessageStoragePolicy { .noMessageStored }

        func delete(_ channelID: String, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment) async throws(APNsBroadcastError) {
            if let failure = self.failure.withLock({ $0 }) { throw failure }
            self.deleted.withLock { $0.append(channelID) }
        }

        func list(bundleID: String, key: APNsSigningKey, environment: APNsEnvironment) async throws(APNsBroadcastError) -> [String] {
            self.live.withLock { $0 }
        }
    }

    static func push(_ event: String, _ name: String, audience: String = #""all""#, contentState: String = #"{"home": 1}"#) -> String {
        let start = event == "start" ? #", "attributes_type": "MatchAttributes", "attributes": {"match": "m"}, "alert": {"title": "Kick-off"}"# : ""
        return #"{"audience": \#(audience), "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "\#(event)", "name": "\#(name)", "content_state": \#(contentState)\#(start)}}}}"#
    }

    @Test func channelsAreCreatedListedAndDeletedThroughAPNs() async throws {
        let apns = ChannelManagement()
        try await APIHarness.run(broadcastChannels: apns) { harness, client in
            let created = try await client.send(
                .post, "/api/live_activity_channels", harness.master(), #"{"name": "final", "message_storage_policy": "most_recent"}"#)
            #expect(created.status == .created)
            let channel = try #require(created.body["live_activity_channel"] as? [String: Any])
            #expect(channel["apns_channel_id"] as? String == "Y2hhbm5lbC00==")
            #expect(channel["message_storage_policy"] as? Int == 1)
            #expect(channel["deleted_at"] is NSNull)

            let again = try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "final", "message_storage_policy": 0}"#)
            #expect(again.status == .conflict)
            #expect(apns.live.withLock { $0.count } == 1, "the second channel is never created at APNs")

            let bad = try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "x", "message_storage_policy": 2}"#)
            #expect(bad.status == .badRequest)
            #expect((bad.body["details"] as? [String: Any])?["path"] as? String == "message_storage_policy")

            let listed = try await client.send(.get, "/api/live_activity_channels", harness.master())
            #expect((listed.body["live_activity_channels"] as? [[String: Any]])?.map { $0["name"] as? String } == ["final"])
            // Another app sees none of them.
            let other = try await client.send(.get, "/api/live_activity_channels", harness.master(harness.orders))
            #expect((other.body["live_activity_channels"] as? [[String: Any]])?.isEmpty == true)

            let deleted = try await client.send(.delete, "/api/live_activity_channels/final", harness.master())
            #expect(deleted.status == .ok)
            #expect((deleted.body["live_activity_channel"] as? [String: Any])?["deleted_by"] as? String == "admin")
            #expect(apns.deleted.withLock { $0 } == ["Y2hhbm5lbC00=="])
            #expect(try await client.send(.delete, "/api/live_activity_channels/final", harness.master()).status == .notFound)
            let all = try await client.send(.get, "/api/live_activity_channels?include_deleted=true", harness.master())
            #expect((all.body["live_activity_channels"] as? [[String: Any]])?.count == 1)
            #expect(try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "final", "message_storage_policy": 0}"#).status == .created)
        }
    }

    @Test func apnsRefusalsAreClearAnswers() async throws {
        let apns = ChannelManagement()
        try await APIHarness.run(broadcastChannels: apns) { harness, client in
            apns.failure.withLock { $0 = .rejected(status: 400, reason: .cannotCreateChannelConfig) }
            let limit = try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "m", "message_storage_policy": 0}"#)
            #expect(limit.status == .badRequest)
            #expect(((limit.body["details"] as? [String: Any])?["error"] as? String)?.contains("CannotCreateChannelConfig") == true)
            apns.failure.withLock { $0 = .noResponse }
            let down = try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "m", "message_storage_policy": 0}"#)
            #expect(down.status == .serviceUnavailable)
            #expect(down.headers[.retryAfter] != nil)
            #expect(try await client.send(.get, "/api/live_activity_channels", harness.master()).body["live_activity_channels"] as? [Any] != nil)
        }
        // Without a channel-management client: 503, never a crash.
        try await APIHarness.run { harness, client in
            let none = try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "m", "message_storage_policy": 0}"#)
            #expect(none.status == .serviceUnavailable)
        }
    }

    @Test func aChannelBackedNameFollowsTheBroadcastRules() async throws {
        let apns = ChannelManagement()
        try await APIHarness.run(broadcastChannels: apns) { harness, client in
            let created = try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "final", "message_storage_policy": 0}"#)
            let channelID = try #require((created.body["live_activity_channel"] as? [String: Any])?["apns_channel_id"] as? String)

            // A broadcast reaches every subscriber: the audience must be all.
            let tagged = try await client.send(.post, "/api/push", harness.master(), Self.push("update", "final", audience: #"{"tag": "fans"}"#))
            #expect(tagged.status == .badRequest)
            let details = try #require(tagged.body["details"] as? [String: Any])
            #expect(details["path"] as? String == "audience")
            #expect((details["error"] as? String)?.contains("every subscribed device") == true)
            // The same audience is fine for a name without a channel.
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.push("update", "other", audience: #"{"tag": "fans"}"#)).status == .accepted)

            // Up to 5,120 bytes may be published; more is refused.
            let large = #"{"text": "\#(String(repeating: "a", count: 4500))"}"#
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.push("update", "final", contentState: large)).status == .accepted)
            let tooLarge = #"{"text": "\#(String(repeating: "a", count: 5200))"}"#
            let refused = try await client.send(.post, "/api/push", harness.master(), Self.push("update", "final", contentState: tooLarge))
            #expect(refused.status == .badRequest)
            #expect(((refused.body["details"] as? [String: Any])?["error"] as? String)?.contains("5120") == true)

            // A start subscribes its activities with input-push-channel, and the push records the channel.
            let start = try await client.send(.post, "/api/push", harness.master(), Self.push("start", "final", audience: #"{"tag": "fans"}"#))
            #expect(start.status == .accepted)
            let startID = try #require((start.body["push_ids"] as? [String])?.first)
            let rows = try await harness.database.query(
                "SELECT apns_body, broadcast_channel_id FROM pushes WHERE push_id = \(UUID(uuidString: startID)!)", logger: TestDatabase.logger
            ).decode((String, String?).self).reduce(into: []) { $0.append($1) }
            #expect(rows.first?.0.contains(#""input-push-channel":"\#(channelID)""#) == true)
            #expect(rows.first?.0.contains("input-push-token") == false)
            #expect(rows.first?.1 == channelID)
            let report = try await client.send(.get, "/api/pushes/\(startID)", harness.master())
            let path = try #require((report.body["push"] as? [String: Any])?["live_activity_channel"] as? [String: Any])
            #expect(path["path"] as? String == "input_push_channel" && path["apns_channel_id"] as? String == channelID)

            // A channel APNs no longer knows refuses its name until acknowledged.
            try await harness.liveActivityChannels.markDeleted(channelID, appID: harness.scores.app.id, reason: .apns, at: Date())
            let gone = try await client.send(.post, "/api/push", harness.master(), Self.push("update", "final"))
            #expect(gone.status == .conflict)
            #expect(((gone.body["details"] as? [String: Any])?["error"] as? String)?.contains("APNs no longer knows") == true)
            let acknowledged = try await client.send(.delete, "/api/live_activity_channels/final", harness.master())
            #expect(acknowledged.status == .ok)
            #expect((acknowledged.body["live_activity_channel"] as? [String: Any])?["deleted_by"] as? String == "apns")
            #expect(try await client.send(.post, "/api/push", harness.master(), Self.push("update", "final", audience: #"{"tag": "fans"}"#)).status == .accepted)
        }
    }

    @Test func theConsoleShowsTheChannelsAndWhichPathAPushTook() async throws {
        let apns = ChannelManagement()
        try await APIHarness.run(broadcastChannels: apns) { harness, client in
            #expect(try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "final", "message_storage_policy": 0}"#).status == .created)
            #expect(try await client.send(.post, "/api/live_activity_channels", harness.master(), #"{"name": "old", "message_storage_policy": 1}"#).status == .created)
            #expect(try await client.send(.delete, "/api/live_activity_channels/old", harness.master()).status == .ok)
            let start = try await client.send(.post, "/api/push", harness.master(), Self.push("start", "final"))
            let startID = try #require((start.body["push_ids"] as? [String])?.first)

            let session = try await ConsoleTests.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let page = try await ConsoleTests.get(client, "\(base)/broadcast-channels", cookie: session)
            #expect(page.status == .ok)
            #expect(page.text.contains("Y2hhbm5lbC00==") && page.text.contains("0: no message stored"))
            #expect(page.text.contains("Y2hhbm5lbC01==") && page.text.contains("by an admin"))
            #expect(try await ConsoleTests.get(client, "\(base)/activities", cookie: session).text.contains("\(base)/broadcast-channels"))
            let push = try await ConsoleTests.get(client, "\(base)/pushes/\(startID)", cookie: session)
            #expect(push.text.contains("id=\"push-broadcast\"") && push.text.contains("input-push-channel"), "\(push.text)")
            // Compose follows the same rules: a tag audience is refused next to the field, "all" is published.
            let compose = "\(base)/compose"
            let csrf = try #require(try await ConsoleTests.get(client, compose, cookie: session).csrf)
            let tagged = try await ConsoleTests.post(
                client, compose, cookie: session,
                [("csrf", csrf), ("event", "update"), ("name", "final"), ("content_state", #"{"home": 2}"#), ("aud_kind_0", "tag"),
                 ("aud_value_0", "fans"), ("action", "send")])
            #expect(tagged.status == .badRequest && tagged.text.contains("id=\"error-audience\""), "\(tagged.text)")
            let sent = try await ConsoleTests.post(
                client, compose, cookie: session,
                [("csrf", csrf), ("event", "update"), ("name", "final"), ("content_state", #"{"home": 2}"#), ("action", "send")])
            #expect(sent.status == .seeOther)
            let composed = try await harness.database.query(
                "SELECT count(*)::int FROM pushes WHERE event = 'update' AND broadcast_channel_id = 'Y2hhbm5lbC00=='", logger: TestDatabase.logger
            ).decode(Int.self).reduce(into: []) { $0.append($1) }
            #expect(composed == [1])
            // Another app's console lists none of them.
            let other = try await ConsoleTests.signIn(client, harness.orders)
            let hidden = try await ConsoleTests.get(client, "/console/app/\(harness.orders.app.appKey)/broadcast-channels", cookie: other)
            #expect(!hidden.text.contains("Y2hhbm5lbC0"))
        }
    }
}

extension APIHarness {
    var liveActivityChannels: LiveActivityChannelStore { LiveActivityChannelStore(client: self.database, logger: TestDatabase.logger) }
}
