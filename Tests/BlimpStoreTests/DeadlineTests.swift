import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// What keeps a store operation from waiting forever, besides the deadline it runs within (`withAbandoningTimeout`:
/// BlimpCoreTests' `TimeoutTests`).
@Suite struct DeadlineTests {
    /// With a statement timeout (the API's, its request timeout), PostgreSQL cancels a longer statement, and the
    /// store reports it as unavailable (a 503 for the API), not as a failure of the request.
    @Test(.enabled(if: TestDatabase.isEnabled)) func aStatementPastItsTimeoutIsUnavailable() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            let client = Database(url: try DatabaseURL(url), pool: "test", statementTimeout: .milliseconds(200), logger: TestDatabase.logger)
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                let error = await #expect(throws: StoreError.self) {
                    try await StoreError.mapping { try await client.query("SELECT pg_sleep(2)", logger: TestDatabase.logger).collect() }
                }
                guard case .unavailable = error else {
                    Issue.record("expected unavailable, got \(String(describing: error))")
                    return
                }
            }
        }
    }
}
