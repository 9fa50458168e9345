import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// What keeps a store operation from waiting forever.
@Suite struct DeadlineTests {
    /// An operation that never returns and ignores cancellation (as a query written to a closed connection does in
    /// postgres-nio 1.33.2) frees its caller at the deadline, or at once when the caller is cancelled.
    @Test func anOperationThatNeverReturnsIsAbandoned() async throws {
        let start = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            try await withAbandoningTimeout(.milliseconds(100)) { await Self.never() }
        }
        #expect(ContinuousClock.now - start < .seconds(5))

        let waiting = Task { try await withAbandoningTimeout(.seconds(60)) { await Self.never() } }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(try await withAbandoningTimeout(.seconds(5)) { 42 } == 42)
    }

    /// Suspends forever, whatever happens to its task.
    private static func never() async {
        await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
    }

    /// With a statement timeout (the API's, its request timeout), PostgreSQL cancels a longer statement, and the
    /// store reports it as unavailable (a 503 for the API), not as a failure of the request.
    @Test(.enabled(if: TestDatabase.isEnabled)) func aStatementPastItsTimeoutIsUnavailable() async throws {
        try await TestDatabase.withFreshDatabase { url, _ in
            let client = PostgresClient(
                configuration: try DatabaseURL(url).clientConfiguration(statementTimeout: .milliseconds(200)), backgroundLogger: TestDatabase.logger)
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
