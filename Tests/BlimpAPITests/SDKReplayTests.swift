import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The stock Airship iOS SDK's request sequence, replayed as its source writes it (docs/references.md#airship-ios-sdk-requests): the
/// headers, signatures, paths with their trailing slashes, and the answers it parses.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct SDKReplayTests {
    static let pushAddress = String(repeating: "a1", count: 32)
    static let activityToken = String(repeating: "b2", count: 40)
    static let startToken = String(repeating: "c3", count: 40)

    @Test func aFreshInstallRegistersAndTracksALiveActivity() async throws {
        try await APIHarness.run { harness, client in
            let appKey = harness.scores.app.appKey
            let appSecret = harness.scores.credentials.appSecret
            func appSigned() -> HTTPFields { APIHarness.fields(SDKRequestHeaders.appSigned(appKey: appKey, signature: SDKSignature(appSecret: appSecret))) }

            // 1. Remote config points every URL at Blimp, without a trailing slash.
            let remoteData = "/api/remote-data/app/\(appKey)/ios?language=en&country=US&sdk_version=19.1.0&random_value=42"
            let config = try await client.send(.get, remoteData, appSigned())
            #expect(config.status == .ok)
            let payload = try #require((config.body["payloads"] as? [[String: Any]])?.first)
            #expect(payload["type"] as? String == "app_config")
            #expect(AirshipDate.parse(payload["timestamp"] as? String ?? "") != nil)
            let urls = (payload["data"] as? [String: Any])?["airship_config"] as? [String: String]
            #expect(urls == ["device_api_url": APIHarness.publicURL, "analytics_url": APIHarness.publicURL, "remote_data_url": APIHarness.publicURL])
            let lastModified = try #require(config.headers[.lastModified])
            var again = appSigned()
            again[.ifModifiedSince] = lastModified
            #expect(try await client.send(.get, remoteData, again).status == .notModified)

            // 2. Channel create (app-signed), as a new channel: 201.
            let create = """
                {"channel": {"device_type": "ios", "opt_in": true, "background": true, "push_address": "\(Self.pushAddress)",
                 "set_tags": true, "tags": ["sports"], "locale_language": "en", "locale_country": "US",
                 "timezone": "Europe/Berlin", "is_activity": true, "app_version": "1.0", "sdk_version": "19.1.0",
                 "device_model": "iPhone15,2", "device_os": "17.4", "contact_id": "0b1e2c9a-5d67-4e0b-a2c4-1f3e5d7c9b11",
                 "ios": {"badge": 0, "quiettime": {"start": "22:00", "end": "07:00"}, "tz": "Europe/Berlin",
                         "scheduled_summary": false, "time_sensitive": true},
                 "permissions": {"display_notifications": "granted"}},
                 "identity_hints": {"user_id": "mc-user"}}
                """
            let created = try await client.send(.post, "/api/channels/", appSigned(), create)
            #expect(created.status == .created)
            let channelID = try #require(created.body["channel_id"] as? String)
            #expect(UUID(uuidString: channelID)?.uuidString.lowercased() == channelID)

            // 3. The channel token.
            let channelSigned = APIHarness.fields(SDKRequestHeaders.channelSigned(appKey: appKey, signature: SDKSignature(appSecret: appSecret), channelID: channelID))
            let auth = try await client.send(.get, "/api/auth/device", channelSigned)
            #expect(auth.status == .ok)
            #expect(auth.body["expires_in"] as? Int == 3_600_000)
            let token = try #require(auth.body["token"] as? String)
            let withToken = APIHarness.fields(SDKRequestHeaders.channelToken(appKey: appKey, token: token))

            // 4. Contact resolve echoes the SDK's anonymous contact.
            let resolve = """
                {"device_info": {"device_type": "ios"},
                 "action": {"type": "resolve", "contact_id": "0B1E2C9A-5D67-4E0B-A2C4-1F3E5D7C9B11"}}
                """
            let contact = try await client.send(.post, "/api/contacts/identify/v2", APIHarness.fields(SDKRequestHeaders.channelSigned(appKey: appKey, signature: SDKSignature(appSecret: appSecret), channelID: channelID)), resolve)
            #expect(contact.status == .ok)
            let contactBody = contact.body["contact"] as? [String: Any]
            #expect((contactBody?["contact_id"] as? String)?.lowercased() == "0b1e2c9a-5d67-4e0b-a2c4-1f3e5d7c9b11")
            #expect(contactBody?["is_anonymous"] as? Bool == true)
            #expect(contact.body["token_expires_in"] as? Int == 3_600_000)

            // 5. A minimized channel update with the token.
            let update = """
                {"channel": {"device_type": "ios", "opt_in": true, "background": true, "tag_changes": {"add": ["news"]},
                 "ios": {"frequent_pushes_enabled": true}}}
                """
            #expect(try await client.send(.put, "/api/channels/\(channelID)", withToken, update).status == .ok)

            // 6. The Live Activity batch.
            let batch = """
                {"live_activities": [
                  {"action": "set", "type": "update_token", "id": "A1B2", "name": "match-42", "token": "\(Self.activityToken)",
                   "start_ts_ms": \(Int(harness.clock.now.timeIntervalSince1970 * 1000)), "action_ts_ms": \(Int(harness.clock.now.timeIntervalSince1970 * 1000) + 5)},
                  {"action": "set", "type": "start_token", "attributes_type": "MatchAttributes", "token": "\(Self.startToken)",
                   "action_ts_ms": \(Int(harness.clock.now.timeIntervalSince1970 * 1000))}],
                 "tags": {"add": {"teams": ["tigers"]}}}
                """
            #expect(try await client.send(.put, "/api/channels/sdk/batch/\(channelID)?platform=ios", withToken, batch).status == .ok)

            // 7. Analytics are accepted and dropped.
            #expect(try await client.send(.post, "/warp9/", withToken, "compressed bytes").status == .ok)

            // What the server API now shows.
            let lookup = try await client.send(.get, "/api/channels/\(channelID)", harness.master())
            #expect(lookup.status == .ok)
            let channel = try #require(lookup.body["channel"] as? [String: Any])
            #expect(channel["push_address"] as? String == Self.pushAddress)
            #expect(channel["opt_in"] as? Bool == true)
            #expect(channel["tags"] as? [String] == ["news", "sports"])
            #expect((channel["tag_groups"] as? [String: [String]])?["teams"] == ["tigers"])
            #expect((channel["ios"] as? [String: Any])?["frequent_pushes_enabled"] as? Bool == true)
            #expect((channel["ios"] as? [String: Any])?["tz"] as? String == "Europe/Berlin")
            // What only the creation carried, through the coalesced insert's JSON rows.
            #expect((channel["ios"] as? [String: Any])?["quiettime"] as? [String: String] == ["start": "22:00", "end": "07:00"])
            #expect((channel["ios"] as? [String: Any])?["badge"] as? Int == 0)
            #expect(channel["background"] as? Bool == true)
            let activities = try #require(channel["live_activities"] as? [[String: Any]])
            #expect(activities.count == 1)
            #expect(activities.first?["name"] as? String == "match-42")
            #expect(activities.first?["token"] as? String == Self.activityToken)
            #expect(activities.first?["state"] as? String == "active")
            #expect(channel["push_to_start_tokens"] as? [String: String] == ["MatchAttributes": Self.startToken])
            #expect((channel["created"] as? String)?.count == 19)

            // The same device registering again (e.g. after a reinstall) finds its channel: 200, same id.
            let recreated = try await client.send(.post, "/api/channels/", appSigned(), create)
            #expect(recreated.status == .ok)
            #expect(recreated.body["channel_id"] as? String == channelID)
        }
    }

    @Test func anUnknownChannelAnswers409SoTheSDKRegistersAnew() async throws {
        try await APIHarness.run { harness, client in
            let appKey = harness.scores.app.appKey
            let channelID = UUID().uuidString.lowercased()
            let signed = APIHarness.fields(
                SDKRequestHeaders.channelSigned(appKey: appKey, signature: SDKSignature(appSecret: harness.scores.credentials.appSecret), channelID: channelID))
            let token = try #require(try await client.send(.get, "/api/auth/device", signed).body["token"] as? String)
            let update = try await client.send(
                .put, "/api/channels/\(channelID)", APIHarness.fields(SDKRequestHeaders.channelToken(appKey: appKey, token: token)),
                #"{"channel": {"opt_in": true}}"#)
            #expect(update.status == .conflict)
            #expect(update.body["ok"] as? Bool == false)
        }
    }

    @Test func signedRequestsAreChecked() async throws {
        try await APIHarness.run { harness, client in
            let appKey = harness.scores.app.appKey
            let body = #"{"channel": {"device_type": "ios"}}"#
            // Signed with the wrong secret, or long ago.
            let wrong = APIHarness.fields(SDKRequestHeaders.appSigned(appKey: appKey, signature: SDKSignature(appSecret: harness.orders.credentials.appSecret)))
            #expect(try await client.send(.post, "/api/channels", wrong, body).status == .unauthorized)
            let old = APIHarness.fields(
                SDKRequestHeaders.appSigned(appKey: appKey, signature: SDKSignature(appSecret: harness.scores.credentials.appSecret), now: Date().addingTimeInterval(-2 * 86400)))
            #expect(try await client.send(.post, "/api/channels", old, body).status == .unauthorized)
            // A channel's token is for that channel only.
            let created = try await client.send(.post, "/api/channels", APIHarness.basic(appKey, harness.scores.credentials.appSecret), body)
            let channelID = try #require(created.body["channel_id"] as? String)
            let other = UUID().uuidString.lowercased()
            let signed = APIHarness.fields(
                SDKRequestHeaders.channelSigned(appKey: appKey, signature: SDKSignature(appSecret: harness.scores.credentials.appSecret), channelID: other))
            let token = try #require(try await client.send(.get, "/api/auth/device", signed).body["token"] as? String)
            // A signed request is accepted once: the same one again, captured and replayed, is not.
            let replayed = try await client.send(.get, "/api/auth/device", signed)
            #expect(replayed.status == .unauthorized)
            #expect((replayed.body["details"] as? [String: Any])?["error"] as? String == "the signed token was used before")
            let batch = try await client.send(
                .put, "/api/channels/sdk/batch/\(channelID)?platform=ios",
                APIHarness.fields(SDKRequestHeaders.channelToken(appKey: appKey, token: token)), "{}")
            #expect(batch.status == .unauthorized)
            // Nor does a channel token act for the app.
            let create = try await client.send(.post, "/api/channels", APIHarness.fields(SDKRequestHeaders.channelToken(appKey: appKey, token: token)), body)
            #expect(create.status == .unauthorized)
            // Nor a channel's signature, presented as an app-wide one with the channel folded into the nonce: the
            // signed strings are the same, so the nonce must be a UUID.
            let timestamp = AirshipDate.format(Date(), separator: " ")
            let (nonce, signature) = (UUID().uuidString.lowercased(), SDKSignature(appSecret: harness.scores.credentials.appSecret))
            let channelSignature = signature.sign([appKey, channelID, nonce, timestamp])
            let forged = APIHarness.fields([
                ("Authorization", "Bearer \(channelSignature)"), ("X-UA-Appkey", appKey), ("X-UA-Nonce", "\(channelID):\(nonce)"),
                ("X-UA-Timestamp", timestamp), ("Accept", "application/vnd.urbanairship+json; version=3;"),
            ])
            let answer = try await client.send(.post, "/api/channels", forged, body)
            #expect(answer.status == .unauthorized)
            #expect((answer.body["details"] as? [String: Any])?["error"] as? String == "X-UA-Nonce is not a UUID")
        }
    }

    /// An app that leaves association to the server API: a device's identify resolves its contact and associates
    /// nothing, answered 200 because the SDK waits for it.
    @Test func devicesCannotAssociateThemselvesWhenTheAppDeniesIt() async throws {
        try await APIHarness.run { harness, client in
            let appKey = harness.scores.app.appKey
            try await AppStore(client: harness.database, logger: TestDatabase.logger).setDeviceAssociation(false, appKey: appKey)
            let created = try await client.send(
                .post, "/api/channels", APIHarness.basic(appKey, harness.scores.credentials.appSecret), #"{"channel": {"device_type": "ios"}}"#)
            let channelID = try #require(created.body["channel_id"] as? String)
            let signed = APIHarness.fields(
                SDKRequestHeaders.channelSigned(appKey: appKey, signature: SDKSignature(appSecret: harness.scores.credentials.appSecret), channelID: channelID))
            let identify = try await client.send(
                .post, "/api/contacts/identify/v2", signed, #"{"action": {"type": "identify", "named_user_id": "victim"}}"#)
            #expect(identify.status == .ok)
            #expect((identify.body["contact"] as? [String: Any])?["is_anonymous"] as? Bool == true)
            let lookup = try await client.send(.get, "/api/named_users?id=victim", harness.master())
            #expect(lookup.status == .notFound)
        }
    }
}
