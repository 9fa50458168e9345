import BlimpCore
import Logging
import PostgresNIO
import Testing

@testable import BlimpStore

/// An app lookup while the database cannot be reached is `unavailable` (the API answers 503), like every other store
/// call, not a database error.
@Suite struct AppStoreOutageTests {
    @Test func anAppLookupDuringAnOutageIsUnavailable() async throws {
        // Port 1 on loopback: nothing listens, so every connection attempt fails; the store's 30 s deadline ends the wait.
        let url = try DatabaseURL("postgres://blimp@127.0.0.1:1/blimp")
        var quiet = Logger(label: "blimp.tests.unreachable")
        quiet.logLevel = .critical
        let client = PostgresClient(configuration: url.clientConfiguration(), backgroundLogger: quiet)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
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
