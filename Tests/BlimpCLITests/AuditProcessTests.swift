import AsyncHTTPClient
import BlimpTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The audit trail across real processes: a server API token issued with `blimp apps token create` sends a push to a
/// running `blimp api`, and `GET /api/audit` names the token by its name and stable id, from the client's address,
/// with neither the token nor the master secret anywhere in the answer.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct AuditProcessTests {
    @Test func aPushSentWithAnAPITokenIsOnRecordByTheTokensNameAndID() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
                let (scores, _) = try await BlimpProcess.createScores(in: folder, environment: environment)
                let appKey = try #require(scores["app_key"])
                let issued = try await BlimpProcess.run(["apps", "token", "create", "--app-key", appKey, "--name", "backend"], environment: environment)
                #expect(issued.status == 0, "\(issued.stderr)")
                let token = issued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let listed = try await BlimpProcess.run(["apps", "token", "list", "--app-key", appKey, "--json"], environment: environment)
                let tokenID = try #require(
                    (try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.first?["id"] as? String)

                let port = freePort()
                let api = try BlimpProcess(["api", "--port", "\(port)"], environment: environment)
                let base = "http://127.0.0.1:\(port)"
                try await waitUntilServing("\(base)/health")

                let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "match-1", "content_state": {"home": 1}}}}}"#
                let (sent, answer) = try await Self.request(
                    "\(base)/api/push", authorization: "Bearer \(token)", appKey: appKey, body: push)
                #expect(sent == 202, "\(answer)")
                let pushID = try #require(
                    ((try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])?["push_ids"] as? [String])?.first)

                let master = "Basic " + Data("\(appKey):\(try #require(scores["master_secret"]))".utf8).base64EncodedString()
                let (status, trail) = try await Self.request("\(base)/api/audit?action=push.accepted", authorization: master, appKey: nil)
                #expect(status == 200, "\(trail)")
                let entries = try #require((try JSONSerialization.jsonObject(with: Data(trail.utf8)) as? [String: Any])?["entries"] as? [[String: Any]])
                #expect(entries.count == 1)
                let entry = try #require(entries.first)
                #expect(entry["subject"] as? String == pushID)
                #expect(entry["address"] as? String == "127.0.0.1")
                let actor = try #require(entry["actor"] as? [String: Any])
                #expect(actor["kind"] as? String == "api_token" && actor["name"] as? String == "backend")
                #expect(actor["token_id"] as? String == tokenID.lowercased())
                #expect(!trail.contains(token) && !trail.contains(scores["master_secret"]!))
                let (_, whole) = try await Self.request("\(base)/api/audit", authorization: master, appKey: nil)
                #expect(whole.contains("api_token_issued") && !whole.contains(token))

                api.signal(SIGTERM)
                let result = await api.wait()
                #expect(result.status == 0, "api exited \(result.status): \(result.stderr.suffix(3000))")
            }
        }
    }

    /// `GET url`, or `POST` with `body`, with Airship's headers: the status and the body.
    static func request(_ url: String, authorization: String, appKey: String?, body: String? = nil) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: url)
        request.method = body == nil ? .GET : .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Accept", value: "application/vnd.urbanairship+json; version=3")
        if let appKey { request.headers.add(name: "X-UA-Appkey", value: appKey) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }
}
