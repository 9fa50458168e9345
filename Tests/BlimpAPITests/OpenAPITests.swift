import BlimpTestSupport
import Foundation
import Testing

/// Blimp's answers, good and bad, on every route, validated against docs/openapi.yaml with openapi-core
/// (Python/openapi_check.py holds the requests).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct OpenAPITests {
    @Test func everyAnswerMatchesTheDocument() async throws {
        try await APIHarness.run(.live, publicURL: nil) { harness, client in
            let (status, text) = try await harness.runPython("openapi_check.py", on: client, channels: 3)
            #expect(status == 0, "\(text)")
            #expect(text.contains("all responses match the spec"), "\(text)")
        }
    }
}
