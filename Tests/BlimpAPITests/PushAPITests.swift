import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import BlimpAPI

@Suite(.enabled(if: TestDatabase.isEnabled)) struct PushAPITests {
    static func update(_ name: String = "match-1", extra: String = "") -> String {
        #"{"audience": {"tag": "fans"}, "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "\#(name)", "content_state": {"home": 1}\#(extra)}}}}"#
    }

    @Test func aPushIsAcceptedDurablyAndReported() async throws {
        try await APIHarness.run { harness, client in
            let sent = try await client.send(.post, "/api/push/", harness.master(), Self.update())
            #expect(sent.status == .accepted)
            #expect(sent.body["ok"] as? Bool == true)
            #expect(sent.body["message_ids"] as? [String] == [])
            #expect(sent.body["content_urls"] as? [String] == [])
            #expect(sent.body["localized_ids"] as? [String] == [])
            let operationID = try #require(sent.body["operation_id"] as? String)
            let pushID = try #require((sent.body["push_ids"] as? [String])?.first)

            let report = try await client.send(.get, "/api/pushes/\(pushID)", harness.master())
            #expect(report.status == .ok)
            let push = try #require(report.body["push"] as? [String: Any])
            #expect(push["state"] as? String == "queued")
            #expect(push["operation_id"] as? String == operationID)
            #expect((push["live_activity"] as? [String: Any])?["name"] as? String == "match-1")
            #expect((push["counts"] as? [String: Any])?["targets"] as? Int == 0)

            // Another app never sees it.
            let hidden = try await client.send(.get, "/api/pushes/\(pushID)", harness.master(harness.orders))
            #expect(hidden.status == .notFound)
            #expect(hidden.body["error_code"] as? Int == 40401)

            // An array gets one push id each, under one operation.
            let batch = try await client.send(.post, "/api/push", harness.master(), "[\(Self.update("a")), \(Self.update("b"))]")
            #expect(batch.status == .accepted)
            #expect((batch.body["push_ids"] as? [String])?.count == 2)

            let page = try await client.send(.get, "/api/pushes?limit=2", harness.master())
            #expect((page.body["pushes"] as? [[String: Any]])?.count == 2)
            let next = try #require(page.body["next_page"] as? String)
            #expect(next.hasPrefix("\(APIHarness.publicURL)/api/pushes?limit=2&start="))
            #expect(page.headers[AirshipJSON.link] == "<\(next)>; rel=\"next\"")
            let last = try await client.send(.get, String(next.dropFirst(APIHarness.publicURL.count)), harness.master())
            #expect((last.body["pushes"] as? [[String: Any]])?.count == 1)
            #expect(last.body["next_page"] == nil)
        }
    }

    @Test func validateChecksAndQueuesNothing() async throws {
        try await APIHarness.run { harness, client in
            let checked = try await client.send(.post, "/api/push/validate/", harness.master(), Self.update())
            #expect(checked.status == .ok)
            #expect(checked.body["ok"] as? Bool == true)
            let bad = try await client.send(.post, "/api/push/validate", harness.master(), Self.update(extra: #", "priority": 7"#))
            #expect(bad.status == .badRequest)
            let page = try await client.send(.get, "/api/pushes", harness.master())
            #expect((page.body["pushes"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    @Test func theMasterSecretOrAnAPITokenMaySend() async throws {
        try await APIHarness.run { harness, client in
            let scores = harness.scores
            let app = try await client.send(.post, "/api/push", APIHarness.basic(scores.app.appKey, scores.credentials.appSecret), Self.update())
            #expect(app.status == .unauthorized)

            let store = AppStore(client: harness.database, logger: TestDatabase.logger)
            let token = try await store.createToken(appKey: scores.app.appKey, name: "ci")
            let otherToken = try await store.createToken(appKey: harness.orders.app.appKey, name: "ci")
            func bearer(_ token: String) -> HTTPFields {
                APIHarness.fields([
                    ("Authorization", "Bearer \(token)"), ("X-UA-Appkey", scores.app.appKey),
                    ("Accept", "application/vnd.urbanairship+json; version=3;"), ("Content-Type", "application/json"),
                ])
            }
            #expect(try await client.send(.post, "/api/push", bearer(token), Self.update()).status == .accepted)
            #expect(try await client.send(.post, "/api/push", bearer(otherToken), Self.update()).status == .unauthorized)
            #expect(try await client.send(.post, "/api/push", bearer(APIToken.make()), Self.update()).status == .unauthorized)
            await #expect(throws: StoreError.self) { try await store.createToken(appKey: scores.app.appKey, name: "ci") }

            var noVersion = harness.master()
            noVersion[.accept] = "application/json"
            #expect(try await client.send(.post, "/api/push", noVersion, Self.update()).status == .notAcceptable)
        }
    }

    struct BadPush: Sendable, CustomTestStringConvertible {
        var body: String
        var path: String?
        var message: String
        var testDescription: String { self.message }
    }

    static let badPushes: [BadPush] = [
        BadPush(body: "{\"audience\": \"all\",\n \"device_types\": [\"ios\"],}", path: nil, message: "expected a key in quotes"),
        BadPush(body: #"{"device_types": ["ios"], "notification": {"alert": "hi"}}"#, path: "audience", message: "'audience' must be set"),
        BadPush(body: #"{"audience": {"tag": "a", "ios_channel": "x"}, "device_types": ["ios"], "notification": {"alert": "hi"}}"#, path: "audience", message: "Specified more than one type of selector"),
        BadPush(body: #"{"audience": "all", "device_types": ["android"], "notification": {"alert": "hi"}}"#, path: "device_types", message: "include \"ios\""),
        BadPush(body: #"{"audience": "all", "device_types": ["ios"], "notification": {"alert1": "hi"}}"#, path: "notification.alert1", message: "is not allowed"),
        BadPush(body: #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "content_state": {}}}}}"#, path: "notification.ios.live_activity.name", message: "name is required"),
        BadPush(body: #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "start", "name": "n", "content_state": {}, "alert": {"title": "t"}}}}}"#, path: "notification.ios.live_activity.attributes", message: "attributes_type and attributes are required"),
        BadPush(body: #"[{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}, {"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "end", "name": "n", "timestamp": 1700000000000}}}}]"#, path: "[1].notification.ios.live_activity.timestamp", message: "must be between"),
        BadPush(body: #"{"audience": "all", "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": "n", "content_state": {"text": "\#(String(repeating: "x", count: 4100))"}}}}}"#, path: "notification", message: "APNs takes at most 4096"),
        BadPush(body: "[]", path: nil, message: "1 to 100 push objects"),
    ]

    @Test(arguments: badPushes) func badPushesAre400NamingThePath(_ bad: BadPush) async throws {
        try await APIHarness.run { harness, client in
            let answer = try await client.send(.post, "/api/push", harness.master(), bad.body)
            #expect(answer.status == .badRequest)
            #expect(answer.body["ok"] as? Bool == false)
            #expect(answer.body["error_code"] as? Int == 40000)
            let details = try #require(answer.body["details"] as? [String: Any])
            #expect(details["path"] as? String == bad.path)
            #expect((details["error"] as? String)?.contains(bad.message) == true, "\(details)")
            if bad.path == nil, bad.message.contains("quotes") {
                #expect(details["location"] as? [String: Int] == ["line": 2, "column": 26])
            }
            let page = try await client.send(.get, "/api/pushes", harness.master())
            #expect((page.body["pushes"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    @Test func aBodyOver5MiBIs413() async throws {
        try await APIHarness.run { harness, client in
            let huge = "[" + String(repeating: " ", count: 5 * 1024 * 1024) + "]"
            let answer = try await client.send(.post, "/api/push", harness.master(), huge)
            #expect(answer.status == .contentTooLarge)
            #expect(answer.body["error_code"] as? Int == 41300)
        }
    }

    @Test func anIdempotencyKeyReturnsTheFirstAnswer() async throws {
        try await APIHarness.run { harness, client in
            var headers = harness.master()
            headers[PushController.idempotencyKey] = "order-42-update-7"
            let first = try await client.send(.post, "/api/push", headers, Self.update())
            let again = try await client.send(.post, "/api/push", headers, Self.update())
            #expect(first.status == .accepted)
            #expect(again.status == .accepted)
            #expect(again.body["push_ids"] as? [String] == first.body["push_ids"] as? [String])
            #expect(again.body["operation_id"] as? String == first.body["operation_id"] as? String)
            let page = try await client.send(.get, "/api/pushes", harness.master())
            #expect((page.body["pushes"] as? [[String: Any]])?.count == 1)

            headers[PushController.idempotencyKey] = "with space"
            #expect(try await client.send(.post, "/api/push", headers, Self.update()).status == .badRequest)
        }
    }

    /// A caller's timestamp is accepted as given, older than the name's last or not (the device decides what to
    /// show, per activity); milliseconds are refused.
    @Test func anOlderTimestampOfTheNameIsQueuedAsGiven() async throws {
        try await APIHarness.run { harness, client in
            let now = Int64(harness.clock.now.timeIntervalSince1970)
            func stamp(_ body: String) async throws -> Int64? {
                let sent = try await client.send(.post, "/api/push", harness.master(), body)
                #expect(sent.status == .accepted)
                let pushID = try #require((sent.body["push_ids"] as? [String])?.first)
                let report = try await client.send(.get, "/api/pushes/\(pushID)", harness.master())
                let push = try #require(report.body["push"] as? [String: Any])
                #expect(push["state"] as? String == "queued")
                return ((push["live_activity"] as? [String: Any])?["timestamp"] as? NSNumber)?.int64Value
            }
            #expect(try await stamp(Self.update(extra: #", "timestamp": \#(now)"#)) == now)
            #expect(try await stamp(Self.update(extra: #", "timestamp": \#(now - 5)"#)) == now - 5)
            // Without a timestamp Blimp stamps one after the last of the name to this audience.
            #expect(try await stamp(Self.update()) == now + 1)
            let milliseconds = try await client.send(.post, "/api/push", harness.master(), Self.update(extra: #", "timestamp": \#(now * 1000)"#))
            #expect(milliseconds.status == .badRequest)
            #expect((milliseconds.body["details"] as? [String: Any])?["path"] as? String == "notification.ios.live_activity.timestamp")
        }
    }
}

/// `POST /api/pushes/{id}/cancel` and `/retry`: a queued push can be cancelled, a failed one retried or cancelled,
/// and anything else is a 409 naming the state.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct PushControlAPITests {
    @Test func queuedPushesCancelAndFailedOnesRetry() async throws {
        try await APIHarness.run { harness, client in
            func push() async throws -> String {
                let sent = try await client.send(.post, "/api/push", harness.master(), PushAPITests.update(UUID().uuidString))
                return try #require((sent.body["push_ids"] as? [String])?.first)
            }
            let queued = try await push()
            let cancelled = try await client.send(.post, "/api/pushes/\(queued)/cancel", harness.master())
            #expect(cancelled.status == .ok)
            #expect((cancelled.body["push"] as? [String: Any])?["state"] as? String == "cancelled")
            let again = try await client.send(.post, "/api/pushes/\(queued)/cancel", harness.master())
            #expect(again.status == .conflict)
            #expect((again.body["details"] as? [String: Any])?["error"] as? String == "the push is cancelled")
            #expect(try await client.send(.post, "/api/pushes/\(queued)/retry", harness.master()).status == .conflict)

            let failed = try await push()
            try await harness.database.query(
                "UPDATE pushes SET state = 'failed', failure_reason = 'APNs refused' WHERE push_id = \(UUID(uuidString: failed)!)",
                logger: TestDatabase.logger)
            let report = try await client.send(.get, "/api/pushes/\(failed)", harness.master())
            #expect((report.body["push"] as? [String: Any])?["failure_reason"] as? String == "APNs refused")
            let retried = try await client.send(.post, "/api/pushes/\(failed)/retry", harness.master())
            #expect(retried.status == .ok)
            let push = try #require(retried.body["push"] as? [String: Any])
            #expect(push["state"] as? String == "queued" && push["failure_reason"] == nil)

            #expect(try await client.send(.post, "/api/pushes/\(failed)/cancel", harness.master(harness.orders)).status == .notFound)
            #expect(try await client.send(.post, "/api/pushes/\(UUID())/retry", harness.master()).status == .notFound)
        }
    }
}
