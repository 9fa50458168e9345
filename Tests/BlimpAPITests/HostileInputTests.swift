import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Testing

/// What anyone who unpacks an app can send, answered without a 500, without a crash and without touching the rest of
/// the request or anyone else's.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct HostileInputTests {
    static let token = String(repeating: "b2", count: 40)

    /// A timestamp past what `Date` and PostgreSQL can hold once trapped the API process; now the entry is skipped,
    /// named in the answer, and the good entry beside it is kept. The token of an activity that started long ago (the
    /// SDK resends what got a 4xx) is answered 200 and dropped without a word.
    @Test func aBatchEntryWithAnImpossibleTimestampIsSkippedAndTheRestKept() async throws {
        try await APIHarness.run { harness, client in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let id = try await ServerAPITests.register(client, harness.scores)
            let headers = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            let batch = """
                {"live_activities": [
                  {"action": "set", "id": "a1", "name": "far", "token": "\(Self.token)", "start_ts_ms": 9000000000000000000, "action_ts_ms": 1},
                  {"action": "remove", "id": "a1", "name": "far", "start_ts_ms": 1000, "action_ts_ms": 9000000000000000000},
                  {"action": "set", "id": "a2", "name": "near", "token": "\(Self.token)", "start_ts_ms": \(now), "action_ts_ms": \(now)},
                  {"action": "set", "id": "a3", "name": "long-gone", "token": "\(Self.token)", "start_ts_ms": 1700000000000, "action_ts_ms": 1700000000000}
                ]}
                """
            let answer = try await client.send(.put, "/api/channels/sdk/batch/\(id)?platform=ios", headers, batch)
            #expect(answer.status == .ok)
            let skipped = try #require(answer.body["skipped"] as? [[String: String]])
            #expect(skipped.map { $0["path"] } == ["live_activities[0].start_ts_ms", "live_activities[1].action_ts_ms"])
            var names: [String] = []
            for try await name in try await harness.database.query("SELECT name FROM live_activities", logger: TestDatabase.logger)
                .decode(String.self) { names.append(name) }
            #expect(names == ["near"])
        }
    }

    /// NUL and numbers jsonb cannot hold are refused with their position by push and validate alike, and never reach
    /// the coalesced write where they would fail other apps' pushes.
    @Test func pushesPostgreSQLCouldNotStoreAreRefusedAlikeByPushAndValidate() async throws {
        try await APIHarness.run { harness, client in
            for contentState in [#"{"s": "a\u0000"}"#, #"{"n": 1e1000000}"#, #"{"n": 1e-20000}"#] {
                let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "m", "content_state": \#(contentState)}}}}"#
                for path in ["/api/push", "/api/push/validate"] {
                    let answer = try await client.send(.post, path, harness.master(), push)
                    #expect(answer.status == .badRequest, "\(path) \(contentState)")
                    #expect(answer.body["error_code"] as? Int == 40000)
                }
            }
            // The other app's push at the same moment is accepted.
            let fine = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}"#
            #expect(try await client.send(.post, "/api/push", harness.master(harness.orders), fine).status == .accepted)
        }
    }

    /// A number at the edges of what is accepted (`jsonb` gives `1e300` back as 301 digits) leaves the push's report
    /// and the listing readable.
    @Test func pushesWithExtremeNumbersStayReadable() async throws {
        try await APIHarness.run { harness, client in
            let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "x", "ios": {"extra": {"big": 1e300, "small": -1.6e-300}}}}"#
            let accepted = try await client.send(.post, "/api/push", harness.master(), push)
            let pushID = try #require((accepted.body["push_ids"] as? [String])?.first)
            let report = try await client.send(.get, "/api/pushes/\(pushID)", harness.master())
            #expect(report.status == .ok)
            let request = (report.body["push"] as? [String: Any])?["request"] as? [String: Any]
            let extra = ((request?["notification"] as? [String: Any])?["ios"] as? [String: Any])?["extra"] as? [String: Any]
            #expect((extra?["big"] as? NSNumber)?.doubleValue == 1e300, "\(report.body)")
            #expect(try await client.send(.get, "/api/pushes", harness.master()).status == .ok)
        }
    }

    /// A tag that breaks a rule costs the registration its tag changes, not the channel: the SDK would never retry.
    @Test func aRegistrationWithABadTagIsCreatedWithoutItsTags() async throws {
        try await APIHarness.run { harness, client in
            let headers = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            let body = #"{"channel": {"device_type": "ios", "set_tags": true, "tags": ["ok", "\#(String(repeating: "t", count: 129))"]}}"#
            let created = try await client.send(.post, "/api/channels", headers, body)
            #expect(created.status == .created)
            let skipped = try #require(created.body["skipped"] as? [[String: String]])
            #expect(skipped.map { $0["path"] } == ["channel.tags"])
            let id = try #require(created.body["channel_id"] as? String)
            let lookup = try await client.send(.get, "/api/channels/\(id)", harness.master())
            #expect(((lookup.body["channel"] as? [String: Any])?["tags"] as? [String])?.isEmpty == true)
        }
    }

    /// The same id named twice in one request means it once (it was a 500: one statement cannot touch a row twice).
    @Test func repeatedIdsInOneRequestMeanThemOnce() async throws {
        try await APIHarness.run { harness, client in
            let id = try await ServerAPITests.register(client, harness.scores)
            let associate = #"{"channel_id": "\#(id)", "named_user_id": "u"}"#
            #expect(try await client.send(.post, "/api/named_users/associate", harness.master(), associate).status == .ok)
            let tags = #"{"audience": {"named_user_id": ["u", "u"]}, "add": {"g": ["t"]}}"#
            #expect(try await client.send(.post, "/api/named_users/tags", harness.master(), tags).status == .ok)
            let channelTags = #"{"audience": {"ios_channel": ["\#(id)", "\#(id.uppercased())"]}, "add": {"g": ["t"]}}"#
            #expect(try await client.send(.post, "/api/channels/tags", harness.master(), channelTags).status == .ok)
        }
    }

    /// Attributes are bounded per request and per channel, and a batch writes them in one statement.
    @Test func attributesAreBoundedPerChannel() async throws {
        try await APIHarness.run { harness, client in
            let id = try await ServerAPITests.register(client, harness.scores)
            let headers = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            for round in 0..<3 {
                let changes = (0..<60).map { #"{"action": "set", "key": "k\#(round)-\#($0)", "value": "v"}"# }.joined(separator: ",")
                let answer = try await client.send(.put, "/api/channels/sdk/batch/\(id)", headers, #"{"attributes": [\#(changes)]}"#)
                #expect(answer.status == .ok)
            }
            var keys: [Int] = []
            for try await count in try await harness.database.query(
                "SELECT count(*)::int FROM channels, jsonb_object_keys(attributes)", logger: TestDatabase.logger
            ).decode(Int.self) { keys.append(count) }
            #expect(keys == [60])
            let tooMany = (0...100).map { #"{"action": "remove", "key": "k\#($0)"}"# }.joined(separator: ",")
            let refused = try await client.send(.put, "/api/channels/sdk/batch/\(id)", headers, #"{"attributes": [\#(tooMany)]}"#)
            #expect(refused.status == .badRequest)
        }
    }
}
