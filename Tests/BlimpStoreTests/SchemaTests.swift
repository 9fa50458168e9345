import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct SchemaTests {
    @Test func applyingTwiceIsHarmless() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            try await Schema.apply(to: client, logger: TestDatabase.logger)
            try await Schema.apply(to: client, logger: TestDatabase.logger)
            let rows = try await client.query(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
                logger: TestDatabase.logger
            )
            for try await count in rows.decode(Int.self) { #expect(count == 13) }
        }
    }

    @Test func concurrentRunsWaitForEachOther() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { try await Schema.apply(to: client, logger: TestDatabase.logger) } }
                try await group.waitForAll()
            }
        }
    }

    /// Every index on tenant rows leads with app_id.
    @Test func everyTenantIndexLeadsWithAppID() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let rows = try await client.query(
                """
                SELECT i.indexrelid::regclass::text, a.attname
                FROM pg_index i
                JOIN pg_class t ON t.oid = i.indrelid
                JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
                JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
                WHERE t.relname <> 'apps'
                """,
                logger: TestDatabase.logger
            )
            var indexes = 0
            for try await (index, firstColumn) in rows.decode((String, String).self) {
                indexes += 1
                #expect(firstColumn == "app_id", "\(index) leads with \(firstColumn)")
            }
            #expect(indexes > 10)
        }
    }

    /// A push being sent by a worker from before parts (its cursor on the push) becomes one part that resumes from
    /// that cursor, and the push loses its old lease and cursor columns.
    @Test func aPushBeingSentBeforePartsResumesFromItsCursor() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (pushID, cursor) = (UUID(), UUID())
            try await client.query("ALTER TABLE pushes ADD COLUMN cursor_channel_id uuid", logger: TestDatabase.logger)
            try await client.query("ALTER TABLE pushes ADD COLUMN lease_expires_at timestamptz", logger: TestDatabase.logger)
            try await client.query(
                """
                INSERT INTO pushes (app_id, push_id, operation_id, state, kind, audience, payload, cursor_channel_id)
                VALUES (1, \(pushID), \(UUID()), 'sending', 'alert', '"all"', '{}', \(cursor))
                """,
                logger: TestDatabase.logger)
            try await Schema.apply(to: client, logger: TestDatabase.logger)
            let parts = try await client.query(
                "SELECT part, state, cursor_channel_id FROM push_parts WHERE push_id = \(pushID)", logger: TestDatabase.logger
            ).decode((Int16, String, UUID).self).array()
            #expect(parts.count == 1 && parts[0].0 == 0 && parts[0].1 == "queued" && parts[0].2 == cursor, "\(parts)")
            let columns = try await client.query(
                """
                SELECT count(*)::int FROM information_schema.columns
                WHERE table_name = 'pushes' AND column_name IN ('cursor_channel_id', 'lease_expires_at')
                """,
                logger: TestDatabase.logger
            ).decode(Int.self).array()
            #expect(columns == [0])
            try await Schema.apply(to: client, logger: TestDatabase.logger)
        }
    }
}

@Suite struct UnreachableDatabaseTests {
    @Test func aClosedPortIsOneClearLine() async throws {
        // Port 1 on loopback: nothing listens there.
        let url = try DatabaseURL("postgres://blimp@127.0.0.1:1/blimp")
        await #expect {
            try await url.checkReachable(logger: TestDatabase.logger)
        } throws: { error in
            let text = "\(error)"
            return text == "cannot connect to the database postgres://blimp@127.0.0.1:1/blimp: connection refused"
        }
    }
}
