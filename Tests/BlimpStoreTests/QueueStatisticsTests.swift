import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// The queue's tables are analyzed as soon as a burst changed enough of them, not a minute later by autovacuum.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct QueueStatisticsTests {
    @Test func aBurstOfPushesIsAnalyzedAndAQuietQueueIsLeftAlone() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Burst", in: client, serverKey: ServerKey.generate().key)
            let statistics = QueueStatistics(client: client, logger: TestDatabase.logger)
            // Nothing changed: nothing to analyze.
            #expect(try await statistics.refresh() == [])
            try await client.query(
                """
                INSERT INTO pushes (app_id, push_id, operation_id, state, kind, activity_name, event, aps_timestamp, audience, payload, apns_body, priority)
                SELECT \(app.id), gen_random_uuid(), gen_random_uuid(), 'queued', 'live_activity', 'delivery', 'update', i,
                       jsonb_build_object('ios_channel', gen_random_uuid()::text), '{}', '{"aps":{}}', 10
                FROM generate_series(1, 6000) i
                """, logger: TestDatabase.logger)
            // A backend reports its changes to the statistics within about a second of its transaction.
            var analyzed: [String] = []
            let deadline = ContinuousClock.now + .seconds(30)
            while analyzed.isEmpty, ContinuousClock.now < deadline {
                analyzed = try await statistics.refresh()
                if analyzed.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(analyzed == ["pushes"])
            var rows: [Int] = []
            for try await count in try await client.query(
                "SELECT reltuples::int FROM pg_class WHERE oid = 'pushes'::regclass", logger: TestDatabase.logger
            ).decode(Int.self) { rows.append(count) }
            #expect(rows == [6000])
            // Analyzed: the same rows do not call for another analysis.
            #expect(try await statistics.refresh() == [])
        }
    }
}
