import BlimpTestSupport
import Foundation
import Testing

/// Blimp's answers, good and bad, on every route, validated against docs/openapi.yaml with openapi-core
/// (Python/openapi_check.py holds the requests).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct OpenAPITests {
    @Test func everyAnswerMatchesTheDocument() async throws {
        try await APIHarness.run(.live, publicURL: nil) { harness, client in
            let port = try #require(client.port)
            var ids: [String] = []
            for _ in 0..<3 { ids.append(try await ServerAPITests.register(client, harness.scores)) }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/openapi_check.py")
            let (status, text) = try await PythonScript.run(script.path, environment: [
                "BLIMP_URL": "http://127.0.0.1:\(port)",
                "APP_KEY": harness.scores.app.appKey,
                "APP_SECRET": harness.scores.credentials.appSecret,
                "MASTER_SECRET": harness.scores.credentials.masterSecret,
                "CHANNEL_IDS": ids.joined(separator: ","),
            ])
            #expect(status == 0, "\(text)")
            #expect(text.contains("all responses match the spec"), "\(text)")
        }
    }
}
