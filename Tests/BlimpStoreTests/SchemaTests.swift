import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct SchemaTests {
    @Test func eachVersionIsAppliedOnceAndRecorded() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            let first = try await Schema.apply(to: client, logger: TestDatabase.logger)
            #expect(first == Schema.migrations)
            let second = try await Schema.apply(to: client, logger: TestDatabase.logger)
            #expect(second.isEmpty)
            let versions = try await client.query(
                "SELECT version FROM schema_migrations ORDER BY version", logger: TestDatabase.logger
            ).decode(Int.self).array()
            #expect(versions == Array(1...Schema.latestVersion))
            let tables = try await client.query(
                """
                SELECT count(*)::int FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
                WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
                """,
                logger: TestDatabase.logger
            ).decode(Int.self).array()
            #expect(tables == [36])
        }
    }

    /// A database set up before versions were recorded (schema.sql applied whole, no history) takes version 1
    /// again harmlessly, keeps its rows, and is recorded as up to date.
    @Test func aDatabaseFromBeforeVersionsIsAdopted() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            for statement in Schema.migrations[0].statements {
                try await client.query(PostgresQuery(unsafeSQL: statement), logger: TestDatabase.logger)
            }
            try await client.query(
                "INSERT INTO activity_names VALUES (1, 'kept', 7, \(UUID()))", logger: TestDatabase.logger)
            try await Schema.apply(to: client, logger: TestDatabase.logger)
            let kept = try await client.query("SELECT name FROM activity_names", logger: TestDatabase.logger)
                .decode(String.self).array()
            #expect(kept == ["kept"])
            let status = try await Schema.status(of: client, logger: TestDatabase.logger)
            #expect(status.map(\.version) == Array(1...Schema.latestVersion) && status.allSatisfy { $0.appliedAt != nil })
        }
    }

    /// A version recorded by a newer binary is listed, and this binary's apply leaves it alone.
    @Test func statusListsPendingVersionsAndNewerOnes() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            let pending = try await Schema.status(of: client, logger: TestDatabase.logger)
            #expect(pending.map(\.version) == Schema.migrations.map(\.version) && pending.allSatisfy { $0.appliedAt == nil })
            try await Schema.apply(to: client, logger: TestDatabase.logger)
            let newer = Schema.latestVersion + 1
            try await client.query(
                "INSERT INTO schema_migrations (version, name) VALUES (\(newer), 'future')", logger: TestDatabase.logger)
            #expect(try await Schema.apply(to: client, logger: TestDatabase.logger).isEmpty)
            let status = try await Schema.status(of: client, logger: TestDatabase.logger)
            #expect(status.last?.version == newer && status.last?.name == "future")
        }
    }

    @Test func concurrentRunsApplyEachVersionOnce() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            let applied = try await withThrowingTaskGroup(of: [Schema.Migration].self) { group in
                for _ in 0..<4 { group.addTask { try await Schema.apply(to: client, logger: TestDatabase.logger) } }
                return try await group.reduce(into: [Int]()) { $0 += $1.map(\.version) }
            }
            #expect(applied.sorted() == Array(1...Schema.latestVersion))
        }
    }

    /// Every index on tenant rows leads with app_id (the deployment's tables, ``TenantKeys/deploymentTables``, aside).
    @Test func everyTenantIndexLeadsWithAppID() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let rows = try await client.query(
                """
                SELECT i.indexrelid::regclass::text, a.attname
                FROM pg_index i
                JOIN pg_class t ON t.oid = i.indrelid
                JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
                JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]
                WHERE t.relname::text <> ALL(\(TenantKeys.deploymentTables))
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

    /// Every table has a primary key, partitions and the deployment's tables included, so a table added later must
    /// come with one (the rule below catches a table without).
    @Test func everyTableHasAPrimaryKey() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            #expect(try await TenantKeys.tablesWithoutPrimaryKey(on: client) == [])
            try await client.query("CREATE TABLE without_key (app_id bigint NOT NULL)", logger: TestDatabase.logger)
            #expect(try await TenantKeys.tablesWithoutPrimaryKey(on: client) == ["without_key"])
        }
    }

    /// Every tenant table has a NOT NULL app_id leading its primary key, and every listed deployment table exists: the schema stays distributable by app_id (docs/scaling.md).
    @Test func everyTenantTableIsKeyedByAppIDFirst() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            #expect(try await TenantKeys.keyViolations(on: client) == [])
            let listed = try await client.query(
                "SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public' AND tablename::text = ANY(\(TenantKeys.deploymentTables))",
                logger: TestDatabase.logger
            ).decode(Int.self).array()
            #expect(listed == [TenantKeys.deploymentTables.count])
        }
    }

    /// Every foreign key between tenant tables pairs app_id with app_id, so that Citus can co-locate a row with the
    /// rows it refers to, and no deployment table refers to a tenant table.
    @Test func foreignKeysBetweenTenantTablesCarryAppID() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (violations, checked) = try await TenantKeys.foreignKeyViolations(on: client)
            #expect(violations == [])
            #expect(checked >= 5)
        }
    }

    /// What docs/scaling.md says of partitioning, on this PostgreSQL (a unique key of a partitioned table must hold its
    /// partition key): every tenant table can be hash-partitioned by app_id with all its keys and indexes, delivery
    /// outcomes and send tallies by time, pushes by push id, and a channel's tags and activities by app and channel;
    /// pushes cannot be by acceptance time (their key lacks accepted_at), nonces by expiry likewise, nor channels by app
    /// and channel (a device token is unique per app, not per channel).
    @Test func tenantTablesCanBePartitionedByAppID() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            /// `nil` when PostgreSQL takes the partitioned copy, else its message.
            func refusal(_ table: String, by key: String) async throws -> String? {
                do {
                    try await client.query(
                        PostgresQuery(unsafeSQL: "CREATE TABLE \(table)_by_key (LIKE \(table) INCLUDING ALL) PARTITION BY \(key)"),
                        logger: TestDatabase.logger)
                    try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)_by_key"), logger: TestDatabase.logger)
                    return nil
                } catch let error as PSQLError {
                    return error.serverInfo?[.message] ?? "\(error)"
                }
            }
            let tenantTables = try await client.query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' AND tablename::text <> ALL(\(TenantKeys.deploymentTables))",
                logger: TestDatabase.logger
            ).decode(String.self).array()
            #expect(tenantTables.count > 10)
            for table in tenantTables {
                #expect(try await refusal(table, by: "HASH (app_id)") == nil, "\(table)")
            }
            #expect(try await refusal("delivery_outcomes", by: "RANGE (sent_at)") == nil)
            #expect(try await refusal("send_tallies", by: "RANGE (minute)") == nil)
            #expect(try await refusal("pushes", by: "RANGE (push_id)") == nil)
            for table in ["channel_tags", "live_activities", "push_to_start_tokens"] {
                #expect(try await refusal(table, by: "HASH (app_id, channel_id)") == nil, "\(table)")
            }
            let needsEveryPartitionColumn = "unique constraint on partitioned table must include all partitioning columns"
            #expect(try await refusal("pushes", by: "RANGE (accepted_at)") == needsEveryPartitionColumn)
            #expect(try await refusal("channels", by: "HASH (app_id, channel_id)") == needsEveryPartitionColumn)
            #expect(try await refusal("used_nonces", by: "RANGE (expires_at)") == needsEveryPartitionColumn)
        }
    }

    /// The two rules above catch what they are for: a table keyed without app_id first, one without app_id, one
    /// without a key, a foreign key that pairs app_id with another column, and a deployment table referring to a
    /// tenant table.
    @Test func theTenantKeyRulesCatchABreak() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            for statement in [
                "CREATE TABLE keyed_by_id (id uuid PRIMARY KEY, app_id bigint NOT NULL)",
                "CREATE TABLE without_app (id uuid PRIMARY KEY)",
                "CREATE TABLE without_key (app_id bigint NOT NULL)",
                """
                CREATE TABLE owner_tags (app_id bigint NOT NULL, owner bigint NOT NULL, channel_id uuid NOT NULL,
                                         PRIMARY KEY (app_id, channel_id),
                                         CONSTRAINT owner_tags_channel FOREIGN KEY (owner, channel_id) REFERENCES channels (app_id, channel_id))
                """,
                """
                ALTER TABLE deployment_secrets ADD COLUMN app_id bigint, ADD COLUMN named_user_id text,
                    ADD CONSTRAINT deployment_secrets_user FOREIGN KEY (app_id, named_user_id) REFERENCES named_users (app_id, named_user_id)
                """,
            ] {
                try await client.query(PostgresQuery(unsafeSQL: statement), logger: TestDatabase.logger)
            }
            #expect(
                try await TenantKeys.keyViolations(on: client) == [
                    "keyed_by_id's primary key leads with id", "without_app has no NOT NULL app_id",
                    "without_app's primary key leads with id", "without_key has no primary key",
                ])
            #expect(
                try await TenantKeys.foreignKeyViolations(on: client).violations == [
                    "deployment_secrets_user: the deployment's deployment_secrets refers to the tenant table named_users",
                    "owner_tags_channel: owner_tags → channels does not pair app_id with app_id",
                ])
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
            try await client.query("DELETE FROM schema_migrations WHERE version = 1", logger: TestDatabase.logger)
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
