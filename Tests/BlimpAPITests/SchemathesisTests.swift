import BlimpCore
import BlimpTestSupport
import Foundation
import Testing

@testable import BlimpAPI

/// Schemathesis generates thousands of requests from docs/openapi.yaml, valid and not, against the live API with its
/// rate limits off: no answer may be a 5xx, and every answer must match the document (status, content type, body and
/// headers). Python/schemathesis_check.py holds the run's settings and prints each failure with a curl command.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct SchemathesisTests {
    @Test func generatedRequestsGetDocumentedAnswersAndNo5xx() async throws {
        var limits = APILimits()
        limits.pushRequests = .unlimited
        limits.serverRequests = .unlimited
        limits.channelCreations = .unlimited
        limits.channelCreationsPerAddress = .unlimited
        // Live activity channels are created and deleted at a stand-in for APNs's channel management (without one,
        // creating a channel is a 503).
        try await APIHarness.run(.live, publicURL: nil, limits: limits, broadcastChannels: LiveActivityChannelAPITests.ChannelManagement()) { harness, client in
            let (status, text) = try await harness.runPython("schemathesis_check.py", on: client, channels: 3)
            #expect(status == 0, "\(text.suffix(6000))")
            #expect(text.contains("no failures"), "\(text.suffix(2000))")
        }
    }
}
