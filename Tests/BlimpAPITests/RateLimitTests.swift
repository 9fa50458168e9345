import BlimpAPI
import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Per-app limits: over them the server and Push APIs answer 429 and the device API 503 (which the SDK retries),
/// each with `Retry-After`, and another app is never refused for it.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct RateLimitTests {
    @Test func pushesOverTheAppsRateAre429WithRetryAfterAndOtherAppsGoOn() async throws {
        var limits = APILimits()
        limits.pushRequests = RateLimit(perSecond: 0.001, burst: 2)  // refills slower than any test runs
        try await APIHarness.run(limits: limits) { harness, client in
            let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}"#
            for _ in 0..<2 { #expect(try await client.send(.post, "/api/push/validate", harness.master(), push).status == .ok) }
            let refused = try await client.send(.post, "/api/push", harness.master(), push)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.body["error_code"] as? Int == 42900)
            #expect(refused.headers[.retryAfter].flatMap(Int.init).map { (900...1000).contains($0) } == true, "a token comes every 1,000 s")
            #expect(try await client.send(.post, "/api/push", harness.master(harness.orders), push).status == .accepted)
        }
    }

    /// Channel creations per client address, read from the trusted proxy's header (its last entry): over the
    /// limit, 503 with `Retry-After`; another address, or another app from the same address, goes on.
    @Test func channelCreationsPerAddressAre503BehindATrustedProxy() async throws {
        var limits = APILimits()
        limits.channelCreationsPerAddress = RateLimit(perSecond: 0.001, burst: 2)
        limits.clientAddressHeader = HTTPField.Name("X-Forwarded-For")!
        try await APIHarness.run(limits: limits) { harness, client in
            func create(_ app: (app: App, credentials: AppCredentials), from address: String) async throws -> (HTTPResponse.Status, HTTPFields) {
                var headers = APIHarness.basic(app.app.appKey, app.credentials.appSecret)
                headers[HTTPField.Name("X-Forwarded-For")!] = "203.0.113.9, \(address)"
                let answer = try await client.send(.post, "/api/channels", headers, #"{"channel": {"device_type": "ios"}}"#)
                return (answer.status, answer.headers)
            }
            for _ in 0..<2 { #expect(try await create(harness.scores, from: "198.51.100.1").0 == .created) }
            let (status, headers) = try await create(harness.scores, from: "198.51.100.1")
            #expect(status == .serviceUnavailable)
            #expect(headers[.retryAfter].flatMap(Int.init).map { (900...1000).contains($0) } == true)
            #expect(try await create(harness.scores, from: "198.51.100.2").0 == .created)
            #expect(try await create(harness.orders, from: "198.51.100.1").0 == .created)
        }
    }
}
