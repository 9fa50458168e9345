import Foundation
import Testing

@testable import BlimpCore

@Suite struct DeliveryPolicyTests {
    let policy = DeliveryPolicy(maxAttempts: 4, baseDelay: .seconds(1), maxDelay: .seconds(3))

    @Test func acceptedIsDelivered() {
        #expect(self.policy.action(for: .accepted(apnsID: "x"), attempt: 1, jitter: 0) == .delivered)
    }

    /// Every documented reason maps to the action the issue names.
    @Test(arguments: APNsReason.documented.map { $0 })
    func everyDocumentedReasonHasItsAction(reason: APNsReason, status: Int) {
        let action = self.policy.action(for: .rejected(status: status, reason: reason, timestamp: nil), attempt: 1, jitter: 1)
        switch reason {
        case .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic:
            #expect(action == .tokenInvalid(since: nil))
        case _ where [429, 500, 503].contains(status):
            #expect(action == .retry(after: .seconds(1)))
        default:
            #expect(action == .failed(reason))
        }
    }

    @Test func unregisteredKeepsItsTimestamp() {
        let response = APNsResponse.rejected(status: 410, body: Array(#"{"reason":"Unregistered","timestamp":1700000000123}"#.utf8))
        #expect(response == .rejected(status: 410, reason: .unregistered, timestamp: Date(timeIntervalSince1970: 1_700_000_000.123)))
        #expect(self.policy.action(for: response, attempt: 1, jitter: 0) == .tokenInvalid(since: Date(timeIntervalSince1970: 1_700_000_000.123)))
    }

    @Test func unknownReasonsAreKeptAsText() {
        let response = APNsResponse.rejected(status: 400, body: Array(#"{"reason":"SomethingNew"}"#.utf8))
        #expect(response == .rejected(status: 400, reason: APNsReason(rawValue: "SomethingNew"), timestamp: nil))
        #expect(self.policy.action(for: response, attempt: 1, jitter: 0) == .failed(APNsReason(rawValue: "SomethingNew")))
        #expect(APNsResponse.rejected(status: 500, body: Array("<html>".utf8)) == .rejected(status: 500, reason: nil, timestamp: nil))
    }

    @Test func retriesBackOffExponentiallyWithJitterThenFail() {
        let noResponse = APNsResponse.noResponse
        #expect(self.policy.action(for: noResponse, attempt: 1, jitter: 1) == .retry(after: .seconds(1)))
        #expect(self.policy.action(for: noResponse, attempt: 2, jitter: 1) == .retry(after: .seconds(2)))
        #expect(self.policy.action(for: noResponse, attempt: 3, jitter: 1) == .retry(after: .seconds(3)))  // capped
        #expect(self.policy.action(for: noResponse, attempt: 3, jitter: 0) == .retry(after: .seconds(1.5)))
        #expect(self.policy.action(for: noResponse, attempt: 4, jitter: 1) == .failed(nil))
        let busy = APNsResponse.rejected(status: 429, reason: .tooManyRequests, timestamp: nil)
        #expect(self.policy.action(for: busy, attempt: 4, jitter: 1) == .failed(.tooManyRequests))
    }
}

@Suite struct DeviceTokenTests {
    @Test(arguments: [64, 160, 200])
    func acceptsHexOfPlausibleLengthsAndLowercasesIt(_ length: Int) throws {
        let token = try #require(DeviceToken(String(repeating: "AB", count: length / 2)))
        #expect(token.hex == String(repeating: "ab", count: length / 2))
        #expect(token.description == "abababab…")
    }

    @Test(arguments: ["", String(repeating: "a", count: 62), String(repeating: "a", count: 202), String(repeating: "a", count: 65), String(repeating: "g", count: 64)])
    func refusesAnythingElse(_ text: String) {
        #expect(DeviceToken(text) == nil)
        #expect(DeviceToken(rawValue: text) == nil)
    }

    @Test func aStoredTokenReadsAsItself() throws {
        let stored = String(repeating: "0a", count: 50)
        let token = try #require(DeviceToken(rawValue: stored))
        #expect(token.rawValue == stored && token.hex == stored)
        #expect(DeviceToken(rawValue: stored.uppercased()) == token)
    }
}
