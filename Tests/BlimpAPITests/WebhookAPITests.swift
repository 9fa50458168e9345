import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import BlimpAPI

/// `/api/webhooks` at the API: an endpoint is created with its secret shown once, listed without it, refused when it
/// is not https, names no public host or would be the app's eleventh, enabled again, given a new secret, deleted, each
/// change on the audit trail.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct WebhookAPITests {
    func fields(_ harness: APIHarness, orders: Bool = false) -> HTTPFields {
        let app = orders ? harness.orders : harness.scores
        let credentials = "\(app.app.appKey):\(app.credentials.masterSecret)"
        return APIHarness.fields([
            ("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()), ("Accept", "application/vnd.urbanairship+json; version=3"),
            ("Content-Type", "application/json"),
        ])
    }

    @Test func endpointsAreManagedAndPrivateOnesRefused() async throws {
        try await APIHarness.run { harness, client in
            let fields = self.fields(harness)
            // An address literal: nothing to resolve on a machine without DNS.
            var answer = try await client.send(.post, "/api/webhooks", fields, #"{"url": "https://93.184.216.34/hooks", "types": ["send", "SEND_REJECTED"]}"#)
            #expect(answer.status == .created, "\(answer.body)")
            let webhook = try #require(answer.body["webhook"] as? [String: Any])
            let id = try #require(webhook["id"] as? String)
            let secret = try #require(webhook["secret"] as? String)
            #expect(secret.hasPrefix("whsec_") && webhook["types"] as? [String] == ["SEND", "SEND_REJECTED"] && webhook["enabled"] as? Bool == true)

            answer = try await client.send(.get, "/api/webhooks", fields)
            let listed = try #require((answer.body["webhooks"] as? [[String: Any]])?.first)
            #expect(listed["id"] as? String == id && listed["secret"] == nil && listed["url"] as? String == "https://93.184.216.34/hooks")

            for (body, path) in [
                (#"{"url": "http://93.184.216.34/hooks"}"#, "url"), (#"{"url": "https://127.0.0.1/hooks"}"#, "url"),
                (#"{"url": "https://[::1]/hooks"}"#, "url"), (#"{"url": "https://169.254.169.254/latest"}"#, "url"),
                (#"{"url": "https://10.0.0.7/hooks"}"#, "url"), (#"{"url": "https://93.184.216.34", "types": ["CLOSE"]}"#, "types[0]"),
            ] {
                answer = try await client.send(.post, "/api/webhooks", fields, body)
                #expect(answer.status == .badRequest, "\(body)")
                #expect((answer.body["details"] as? [String: Any])?["path"] as? String == path, "\(body): \(answer.body)")
            }

            // Hostile input: a NUL in the URL, a huge list of one type, a number where a list goes, deep nesting,
            // another app's credentials on this endpoint; each a 4xx, and the API serves on.
            let many = Array(repeating: #""SEND""#, count: 20_000).joined(separator: ",")
            for body in [
                "{\"url\": \"https://93.184.216.34/h\u{0}ooks\"}", #"{"url": "https://93.184.216.34", "types": 1e-20000}"#,
                #"{"url": "https://93.184.216.34", "types": [\#(many)], "url": "https://10.0.0.1"}"#, String(repeating: "[", count: 50_000),
            ] {
                answer = try await client.send(.post, "/api/webhooks", fields, body)
                #expect(answer.status == .badRequest, "\(body.prefix(60)): \(answer.status)")
                #expect(answer.body["ok"] as? Bool == false, "\(answer.body)")
            }
            let others = self.fields(harness, orders: true)
            for (method, path) in [(HTTPRequest.Method.delete, "/api/webhooks/\(id)"), (.post, "/api/webhooks/\(id)/enable"), (.post, "/api/webhooks/\(id)/rotate")] {
                #expect(try await client.send(method, path, others).status == .notFound, "another app's \(path)")
            }
            #expect((try await client.send(.get, "/api/webhooks", others).body["webhooks"] as? [Any])?.isEmpty == true)

            // A new secret: shown once, the endpoint otherwise unchanged.
            answer = try await client.send(.post, "/api/webhooks/\(id)/rotate", fields)
            let rotated = try #require((answer.body["webhook"] as? [String: Any])?["secret"] as? String)
            #expect(answer.status == .ok && rotated.hasPrefix("whsec_") && rotated != secret)
            answer = try await client.send(.post, "/api/webhooks/\(id)/enable", fields)
            #expect(answer.status == .ok && (answer.body["webhook"] as? [String: Any])?["secret"] == nil)

            // Ten an app.
            for _ in 1..<WebhookStore.maximumPerApp {
                #expect(try await client.send(.post, "/api/webhooks", fields, #"{"url": "https://93.184.216.34/hooks"}"#).status == .created)
            }
            answer = try await client.send(.post, "/api/webhooks", fields, #"{"url": "https://93.184.216.34/hooks"}"#)
            #expect(answer.status == .badRequest, "\(answer.body)")

            #expect(try await client.send(.delete, "/api/webhooks/\(id)", fields).status == .noContent)
            let audited = try await harness.database.query(
                "SELECT action FROM audit_events WHERE subject = \(id) ORDER BY id", logger: TestDatabase.logger
            ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
            #expect(audited == ["webhook.created", "webhook.rotated", "webhook.enabled", "webhook.deleted"])
            for (method, path) in [(HTTPRequest.Method.delete, "/api/webhooks/\(id)"), (.post, "/api/webhooks/\(id)/enable"), (.post, "/api/webhooks/x/rotate")] {
                #expect(try await client.send(method, path, fields).status == .notFound, "\(path)")
            }
            #expect(try await client.send(.get, "/api/webhooks", fields).body["webhooks"].map { ($0 as? [Any])?.count } == WebhookStore.maximumPerApp - 1)
        }
    }
}
