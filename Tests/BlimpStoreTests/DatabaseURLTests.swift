import Foundation
import Testing

@testable import BlimpStore

@Suite struct DatabaseURLTests {
    @Test func parsesAFullURL() throws {
        let url = try DatabaseURL("postgres://blimp:p%40ss@db.internal:6543/blimp_prod?sslmode=require")
        #expect(url.host == "db.internal")
        #expect(url.port == 6543)
        #expect(url.username == "blimp")
        #expect(url.password == "p@ss")
        #expect(url.database == "blimp_prod")
        #expect(url.tlsMode == .require)
        // The password never shows.
        #expect(url.description == "postgres://blimp@db.internal:6543/blimp_prod")
    }

    @Test func defaultsToPort5432AndNoTLS() throws {
        let url = try DatabaseURL("postgresql://me@127.0.0.1/blimp")
        #expect(url.port == 5432)
        #expect(url.password == nil)
        #expect(url.tlsMode == .disable)
    }

    @Test(arguments: [
        "", "mysql://u@h/db", "postgres://h/db", "postgres://u@/db", "postgres://u@h", "postgres://u@h/",
        "postgres://u:secret@h/db?sslmode=sometimes", "postgres://u@h/db?search_path=x",
    ])
    func refusesMalformedURLsWithoutQuotingThem(_ text: String) {
        #expect {
            try DatabaseURL(text)
        } throws: { error in
            guard case DatabaseError.invalidURL = error else { return false }
            return !"\(error)".contains("secret")
        }
    }
}

@Suite struct SchemaSplitTests {
    @Test func splitsAtLineEndingSemicolonsAndDropsComments() {
        let sql = """
            -- a comment; with a semicolon;
            CREATE TABLE a (
                x text DEFAULT 'a;b' -- trailing
            );

            CREATE INDEX i ON a (x);
            """
        #expect(
            Schema.split(sql) == [
                "CREATE TABLE a (\n    x text DEFAULT 'a;b' -- trailing\n);",
                "CREATE INDEX i ON a (x);",
            ]
        )
    }

    @Test func versionLinesCutTheSchemaIntoMigrations() {
        let sql = """
            CREATE TABLE a (x int);
            -- version 2: add y
            ALTER TABLE a ADD COLUMN y int;
            -- version 3, no transaction: index y
            DROP INDEX CONCURRENTLY IF EXISTS a_y;
            CREATE INDEX CONCURRENTLY a_y ON a (y);
            """
        #expect(
            Schema.migrations(in: sql) == [
                .init(version: 1, name: "baseline", statements: ["CREATE TABLE a (x int);"]),
                .init(version: 2, name: "add y", statements: ["ALTER TABLE a ADD COLUMN y int;"]),
                .init(
                    version: 3, name: "index y",
                    statements: ["DROP INDEX CONCURRENTLY IF EXISTS a_y;", "CREATE INDEX CONCURRENTLY a_y ON a (y);"],
                    transactional: false),
            ]
        )
        #expect(Schema.migrations.contains { !$0.transactional })
    }

    @Test func theShippedSchemaHasEveryTable() {
        let creates = Schema.migrations.flatMap(\.statements).map { $0.replacingOccurrences(of: "CREATE UNLOGGED TABLE", with: "CREATE TABLE") }
            .filter { $0.hasPrefix("CREATE TABLE") }.map { $0.replacingOccurrences(of: "IF NOT EXISTS ", with: "").split(separator: " ")[2] }
        #expect(
            creates == [
                "apps", "named_users", "channels", "channel_tags", "named_user_tags", "live_activities",
                "push_to_start_tokens", "pushes", "push_parts", "activity_names", "push_requests", "api_tokens", "delivery_outcomes",
                "dispatch_turns", "used_nonces", "console_sessions", "send_tallies", "app_rollups", "activity_name_rollups",
                "deployment_leases", "deployment_secrets", "awaiting_activities", "held_releases", "live_activity_channels",
                "time_zones", "schedules", "schedule_firings", "live_activity_types", "audit_events", "accounts", "account_roles",
                "rate_buckets",
            ]
        )
    }
}
