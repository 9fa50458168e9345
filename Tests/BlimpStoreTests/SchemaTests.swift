import BlimpTestSupport
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
