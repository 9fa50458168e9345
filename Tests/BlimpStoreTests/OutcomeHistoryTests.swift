import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct OutcomeHistoryTests {
    /// The janitor keeps the newest 20 outcomes of each token, and every outcome of the last hour.
    @Test func trimmingKeepsTheNewestPerTokenAndTheLastHour() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            // token, how many, the newest one's age in minutes (and 30 s), the others a minute apart before it
            for (token, count, newest) in [("old-many", 25, 120), ("old-few", 5, 120), ("recent-many", 30, 0), ("straddling", 50, 30)] {
                try await client.query(
                    """
                    INSERT INTO delivery_outcomes (app_id, push_id, token, status, sent_at)
                    SELECT 1, gen_random_uuid(), \(token), 200, \(now) - make_interval(mins => (\(newest) + i)::int, secs => 30)
                    FROM generate_series(0, \(count) - 1) i
                    """,
                    logger: TestDatabase.logger)
            }
            let store = DispatchStore(client: client, logger: TestDatabase.logger)
            // old-many loses 5; straddling keeps its 30 of the last hour (ages 30 to 59 minutes) and nothing older.
            #expect(try await store.trimOutcomes(now: now) == 5 + 20)
            let kept = try await client.query(
                "SELECT token, count(*)::int FROM delivery_outcomes GROUP BY token ORDER BY token", logger: TestDatabase.logger
            ).decode((String, Int).self).array()
            #expect(kept.map { "\($0.0)=\($0.1)" } == ["old-few=5", "old-many=20", "recent-many=30", "straddling=30"])
            #expect(try await store.trimOutcomes(now: now) == 0)
        }
    }
}
