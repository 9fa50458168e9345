import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import BlimpAPI

@Suite(.enabled(if: TestDatabase.isEnabled)) struct ServerAPITests {
    /// Registers a channel with the app secret and returns its id.
    static func register(_ client: any TestClientProtocol, _ app: (app: App, credentials: AppCredentials)) async throws -> String {
        let created = try await client.send(
            .post, "/api/channels", APIHarness.basic(app.app.appKey, app.credentials.appSecret), #"{"channel": {"device_type": "ios"}}"#)
        return try #require(created.body["channel_id"] as? String)
    }

    @Test func listingPagesToTheEndWithAbsoluteLinks() async throws {
        try await APIHarness.run { harness, client in
            var ids: [String] = []
            for _ in 0..<5 { ids.append(try await Self.register(client, harness.scores)) }
            _ = try await Self.register(client, harness.orders)
            var seen: [String] = []
            var uri: String? = "/api/channels/?limit=2"
            while let next = uri {
                let page = try await client.send(.get, next, harness.master())
                #expect(page.status == .ok)
                seen += (page.body["channels"] as? [[String: Any]] ?? []).compactMap { $0["channel_id"] as? String }
                let nextPage = page.body["next_page"] as? String
                #expect(nextPage == nil || nextPage!.hasPrefix(APIHarness.publicURL + "/api/channels?limit=2&start="))
                #expect((page.headers[HTTPField.Name("Link")!] != nil) == (nextPage != nil))
                uri = nextPage.map { String($0.dropFirst(APIHarness.publicURL.count)) }
            }
            #expect(seen == ids.sorted())
        }
    }

    /// A named user with 2,500 channels pages them 1,000 at a time, in id order; a page of named users stops after
    /// the one that brings its channels to 1,000, and links to the rest of that one's channels.
    @Test func namedUsersWithManyChannelsPage() async throws {
        try await APIHarness.run { harness, client in
            let appID = harness.scores.app.id
            try await harness.database.query(
                """
                INSERT INTO named_users (app_id, named_user_id) VALUES (\(appID), 'crowd'), (\(appID), 'few'), (\(appID), 'none')
                """, logger: TestDatabase.logger)
            try await harness.database.query(
                """
                INSERT INTO channels (app_id, channel_id, named_user_id)
                    SELECT \(appID), gen_random_uuid(), CASE WHEN i <= 2500 THEN 'crowd' ELSE 'few' END
                    FROM generate_series(1, 2510) i
                """, logger: TestDatabase.logger)
            func channelIDs(_ user: [String: Any]?) -> [String] {
                (user?["channels"] as? [[String: Any]] ?? []).compactMap { $0["channel_id"] as? String }
            }
            var seen: [String] = []
            var uri: String? = "/api/named_users?id=crowd"
            while let next = uri {
                let answer = try await client.send(.get, next, harness.master())
                #expect(answer.status == .ok)
                let user = answer.body["named_user"] as? [String: Any]
                #expect(channelIDs(user).count == (seen.count < 2000 ? 1000 : 500))
                seen += channelIDs(user)
                let nextPage = user?["channels_next_page"] as? String
                #expect((answer.headers[HTTPField.Name("Link")!] != nil) == (nextPage != nil))
                uri = nextPage.map { String($0.dropFirst(APIHarness.publicURL.count)) }
            }
            let all = try await harness.database.query(
                "SELECT channel_id::text FROM channels WHERE named_user_id = 'crowd' ORDER BY channel_id", logger: TestDatabase.logger
            ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
            #expect(seen == all)

            let first = try await client.send(.get, "/api/named_users", harness.master())
            let firstUsers = try #require(first.body["named_users"] as? [[String: Any]])
            #expect(firstUsers.map { $0["named_user_id"] as? String } == ["crowd"])
            #expect(channelIDs(firstUsers[0]) == Array(all.prefix(1000)))
            #expect(firstUsers[0]["channels_next_page"] as? String == "\(APIHarness.publicURL)/api/named_users?id=crowd&start=\(all[1000])")
            let nextPage = try #require(first.body["next_page"] as? String)
            let second = try await client.send(.get, String(nextPage.dropFirst(APIHarness.publicURL.count)), harness.master())
            let secondUsers = try #require(second.body["named_users"] as? [[String: Any]])
            #expect(secondUsers.map { $0["named_user_id"] as? String } == ["few", "none"])
            #expect(secondUsers.map { channelIDs($0).count } == [10, 0])
            #expect(second.body["next_page"] == nil)
        }
    }

    @Test func appsNeverSeeEachOthersChannels() async throws {
        try await APIHarness.run { harness, client in
            let id = try await Self.register(client, harness.scores)
            let lookup = try await client.send(.get, "/api/channels/\(id)", harness.master(harness.orders))
            #expect(lookup.status == .notFound)
            #expect(lookup.body["error_code"] as? Int == 40401)
            let unknown = try await client.send(.get, "/api/channels/\(UUID().uuidString)", harness.master(harness.orders))
            #expect(unknown.body as NSDictionary == lookup.body as NSDictionary)
            // The app secret cannot read devices.
            let withAppSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            #expect(try await client.send(.get, "/api/channels/\(id)", withAppSecret).status == .unauthorized)
            #expect(try await client.send(.get, "/api/channels", withAppSecret).status == .unauthorized)
            // Another app's tag and uninstall requests leave the channel alone.
            let tags = #"{"audience": {"ios_channel": "\#(id)"}, "add": {"g": ["t"]}}"#
            #expect(try await client.send(.post, "/api/channels/tags", harness.master(harness.orders), tags).status == .ok)
            #expect(try await client.send(.post, "/api/channels/uninstall", harness.master(harness.orders), #"["\#(id)"]"#).status == .ok)
            let channel = try await client.send(.get, "/api/channels/\(id)", harness.master()).body["channel"] as? [String: Any]
            #expect(channel?["installed"] as? Bool == true)
            #expect(channel?["tag_groups"] as? [String: [String]] == [:])
        }
    }

    @Test func theVersionIsRequiredAndParsedLeniently() async throws {
        try await APIHarness.run { harness, client in
            var headers = harness.master()
            for (accept, status) in [
                ("application/vnd.urbanairship+json; version=3;", HTTPResponse.Status.ok),
                ("application/json, application/vnd.urbanairship+json;version=3", .ok),
                ("application/json", .notAcceptable),
                ("application/vnd.urbanairship+json; version=2", .notAcceptable),
            ] {
                headers[.accept] = accept
                #expect(try await client.send(.get, "/api/channels", headers).status == status, "\(accept)")
            }
            headers[.accept] = nil
            let missing = try await client.send(.get, "/api/channels", headers)
            #expect(missing.status == .notAcceptable)
            #expect(missing.body["error_code"] as? Int == 40600)
        }
    }

    struct BadRequest: Sendable, CustomTestStringConvertible {
        let method: HTTPRequest.Method
        let path: String
        let body: String
        var testDescription: String { "\(self.method) \(self.path) \(self.body)" }
    }

    static let channel = "CHANNEL"
    static let badRequests: [BadRequest] = [
        BadRequest(method: .post, path: "/api/channels", body: "not json"),
        BadRequest(method: .post, path: "/api/channels", body: "[]"),
        BadRequest(method: .post, path: "/api/channels", body: "{}"),
        BadRequest(method: .post, path: "/api/channels", body: #"{"channel": {"device_type": "ios", "opt_in": "yes"}}"#),
        BadRequest(method: .post, path: "/api/channels", body: #"{"channel": {"device_type": "ios", "push_address": "zz"}}"#),
        BadRequest(method: .post, path: "/api/channels", body: #"{"channel": {"device_type": "android"}}"#),
        BadRequest(method: .post, path: "/api/channels", body: #"{"channel": {"opt_in": true}}"#),
        BadRequest(method: .put, path: "/api/channels/CHANNEL", body: #"{"channel": 5}"#),
        BadRequest(method: .put, path: "/api/channels/CHANNEL", body: #"{"channel": {"ios": {"badge": "many"}}}"#),
        BadRequest(method: .put, path: "/api/channels/sdk/batch/CHANNEL?platform=ios", body: #"{"live_activities": "x"}"#),
        BadRequest(method: .put, path: "/api/channels/CHANNEL", body: #"{"channel": {"timezone": "Europe/Berlin\u0000"}}"#),
        BadRequest(method: .post, path: "/api/channels/tags", body: #"{"audience": {"ios_channel": "CHANNEL"}, "add": {"g": ["\u0000"]}}"#),
        BadRequest(method: .get, path: "/api/named_users?start=a%00b", body: ""),
        BadRequest(method: .get, path: "/api/named_users?id=u&start=not-a-channel", body: ""),
        BadRequest(method: .put, path: "/api/channels/sdk/batch/CHANNEL?platform=android", body: "{}"),
        BadRequest(method: .post, path: "/api/channels/tags", body: #"{"audience": {}, "add": {"g": ["t"]}}"#),
        BadRequest(method: .post, path: "/api/channels/tags", body: #"{"audience": {"ios_channel": "nope"}, "add": {"g": ["t"]}}"#),
        BadRequest(method: .post, path: "/api/channels/tags", body: #"{"audience": {"ios_channel": "CHANNEL"}}"#),
        BadRequest(method: .post, path: "/api/channels/tags", body: #"{"audience": {"ios_channel": "CHANNEL"}, "add": {"g": ["t"]}, "set": {"g": []}}"#),
        BadRequest(method: .post, path: "/api/channels/tags", body: #"{"audience": {"android_channel": "CHANNEL"}, "add": {"g": ["t"]}}"#),
        BadRequest(method: .post, path: "/api/channels/uninstall", body: "{}"),
        BadRequest(method: .post, path: "/api/channels/uninstall", body: "[]"),
        BadRequest(method: .post, path: "/api/channels/uninstall", body: #"["x"]"#),
        BadRequest(method: .post, path: "/api/channels/uninstall", body: "[5]"),
        BadRequest(method: .post, path: "/api/named_users/associate", body: #"{"channel_id": "CHANNEL"}"#),
        BadRequest(method: .post, path: "/api/named_users/associate", body: #"{"channel_id": "CHANNEL", "named_user_id": " padded"}"#),
        BadRequest(method: .post, path: "/api/named_users/associate", body: #"{"email_address": "a@b.c", "named_user_id": "u"}"#),
        BadRequest(method: .post, path: "/api/named_users/disassociate", body: "7"),
        BadRequest(method: .post, path: "/api/named_users/tags", body: #"{"audience": {"named_user_id": []}, "add": {"g": ["t"]}}"#),
        BadRequest(method: .post, path: "/api/named_users/tags", body: #"{"audience": {"named_user_id": "u"}}"#),
        BadRequest(method: .post, path: "/api/named_users/uninstall", body: #"{"named_user_id": []}"#),
        BadRequest(method: .get, path: "/api/channels?limit=0", body: ""),
        BadRequest(method: .get, path: "/api/channels?limit=1001", body: ""),
        BadRequest(method: .get, path: "/api/channels?start=x", body: ""),
        BadRequest(method: .get, path: "/api/named_users?id=", body: ""),
        BadRequest(method: .post, path: "/api/contacts/identify/v2", body: #"{"action": {"type": "fly"}}"#),
        BadRequest(method: .post, path: "/api/contacts/identify/v2", body: "{}"),
        BadRequest(method: .post, path: "/api/contacts/identify/v2", body: #"{"action": {"type": "identify"}}"#),
    ]

    @Test(arguments: badRequests) func malformedRequestsAre400WithAirshipsErrorBody(_ bad: BadRequest) async throws {
        try await APIHarness.run { harness, client in
            let id = try await Self.register(client, harness.scores)
            var headers = harness.master()
            headers[Authenticator.channelID] = id  // the contact API needs it; the master secret may act for any channel
            let answer = try await client.send(
                bad.method, bad.path.replacingOccurrences(of: Self.channel, with: id), headers,
                bad.body.replacingOccurrences(of: Self.channel, with: id))
            #expect(answer.status == .badRequest)
            #expect(answer.body["ok"] as? Bool == false)
            #expect(answer.body["error_code"] as? Int == 40000)
            #expect(answer.body["error"] is String)
            #expect((answer.body["details"] as? [String: Any])?["error"] is String)
        }
    }

    @Test func anUnknownRouteOrChannelIsAirshipsNotFound() async throws {
        try await APIHarness.run { harness, client in
            let route = try await client.send(.get, "/api/nothing-here", harness.master())
            #expect(route.status == .notFound)
            #expect(route.body["ok"] as? Bool == false)
            let batch = try await client.send(.put, "/api/channels/sdk/batch/\(UUID())?platform=ios", harness.master(), "{}")
            #expect(batch.status == .notFound)
            #expect(batch.body["error_code"] as? Int == 40401)
        }
    }
}
