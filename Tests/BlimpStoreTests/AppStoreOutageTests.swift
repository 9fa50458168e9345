import BlimpTestSupport
import BlimpCore
import Logging
import PostgresNIO
import Testing

@testable import BlimpStore

/// An app lookup while the database cannot be reached is `unavailable` (the API answers 503), like every other store
/// call, not a database error.
@Suite struct AppStoreOutageTests {
    @Test func anAppLookupDuringAnOutageIsUnavailable() async throws {
        try await TestDatabase.withUnreachableDatabase { client, quiet in
            // Every connection attempt fails; the store's 30 s deadline ends the wait.
            do {
                _ = try await AppStore(client: client, logger: quiet).find(appKey: String(repeating: "A", count: 22))
                Issue.record("a lookup with no database succeeded")
            } catch StoreError.unavailable {
                // As every store call during an outage.
            } catch {
                Issue.record("expected unavailable, got \(error)")
            }
        }
    }
}
