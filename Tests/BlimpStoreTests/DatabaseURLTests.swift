import BlimpTestSupport
import Foundation
import Testing

@testable import BlimpStore

@Suite struct DatabaseURLTests {
    @Test func parsesAFullURL() throws {
        let url = try DatabaseURL("postgres://blimp:p%40ss@db.internal:6543/blimp_prod?sslmode=require")
        #expect(url.endpoints == [.init(host: "db.internal", port: 6543)])
        #expect(url.username == "blimp")
        #expect(url.password == "p@ss")
        #expect(url.database == "blimp_prod")
        #expect(url.tlsMode == .require)
        // The password never shows.
        #expect(url.description == "postgres://blimp@db.internal:6543/blimp_prod")
    }

    @Test func defaultsToPort5432AndNoTLS() throws {
        let url = try DatabaseURL("postgresql://me@127.0.0.1/blimp")
        #expect(url.endpoints.map(\.port) == [5432])
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
                "delivery_outcomes", "delivery_outcomes_default", "delivery_outcomes_upgrade",
                "rate_buckets", "events", "event_trims", "webhooks",
            ]
        )
    }
}

/// libpq's `sslrootcert`, `connect_timeout` and `application_name` in `DATABASE_URL`.
@Suite struct DatabaseURLOptionsTests {
    @Test func readsTheCAFileTheTimeoutAndTheApplicationName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blimp-url-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let certificates = try TestCertificates(in: folder)
        let url = try DatabaseURL(
            "postgres://u:secret@db/blimp?sslmode=verify-full&sslrootcert=\(certificates.authority.path)&connect_timeout=3&application_name=blimp-api%201")
        #expect(url.tlsMode == .verifyFull)
        #expect(url.rootCertificates?.count == 1)
        #expect(url.connectTimeout == .seconds(3))
        #expect(url.applicationName == "blimp-api 1")
        #expect(url.clientConfiguration(for: url.endpoints[0]).options.connectTimeout == .seconds(3))
        #expect(try url.connectionConfiguration(for: url.endpoints[0]).options.connectTimeout == .seconds(3))
        #expect(url.startupParameters(statementTimeout: nil).map { "\($0)=\($1)" } == ["jit=off", "application_name=blimp-api 1"])
        // Through a transaction pooler the name is still sent: PgBouncer keeps it for each client.
        let pooled = try DatabaseURL("postgres://u@db/blimp?pooler=transaction&application_name=blimp")
        #expect(pooled.startupParameters(statementTimeout: .seconds(1)).map { "\($0)=\($1)" } == ["application_name=blimp"])
        // As in libpq, `require` with a CA file verifies the certificate (not the host name).
        #expect(try DatabaseURL("postgres://u@db/blimp?sslmode=require&sslrootcert=\(certificates.authority.path)").rootCertificates?.count == 1)
    }

    @Test func defaultsToTenSecondsAndNoName() throws {
        let url = try DatabaseURL("postgres://u@db/blimp?sslmode=verify-ca")
        #expect(url.tlsMode == .verifyCA && url.rootCertificates == nil)
        #expect(url.connectTimeout == .seconds(10))
        #expect(url.applicationName == nil)
    }

    @Test(arguments: [
        ("connect_timeout=0", "connect_timeout must be whole seconds from 1 to 3600"),
        ("connect_timeout=-5", "connect_timeout must be whole seconds from 1 to 3600"),
        ("connect_timeout=2.5", "connect_timeout must be whole seconds from 1 to 3600"),
        ("connect_timeout=3601", "connect_timeout must be whole seconds from 1 to 3600"),
        ("connect_timeout=", "connect_timeout must be whole seconds from 1 to 3600"),
        ("application_name=", "application_name must be 1 to 63 printable ASCII characters"),
        ("application_name=caf%C3%A9", "application_name must be 1 to 63 printable ASCII characters"),
        ("application_name=\(String(repeating: "a", count: 64))", "application_name must be 1 to 63 printable ASCII characters"),
        ("sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem", "sslrootcert: cannot read /nonexistent/ca.pem"),
        ("sslmode=verify-full&sslrootcert=/etc/passwd", "sslrootcert: /etc/passwd holds no PEM certificate"),
        ("sslrootcert=/etc/ssl/certs/ca-certificates.crt", "sslrootcert needs sslmode=verify-ca or verify-full"),
        ("sslmode=verify_full", "sslmode must be one of disable, prefer, require, verify-ca, verify-full"),
    ])
    func refusesBadOptionsClearly(_ query: String, _ message: String) {
        #expect {
            try DatabaseURL("postgres://u:secret@db/blimp?\(query)")
        } throws: { error in
            guard case DatabaseError.invalidURL = error else { return false }
            return "\(error)".contains(message) && !"\(error)".contains("secret")
        }
    }

    @Test(arguments: ["postgres://u:secret@db:0/blimp", "postgres://u:secret@db:65536/blimp", "postgres://u:secret@db:99999/blimp"])
    func refusesAPortOutOfRange(_ text: String) {
        #expect {
            try DatabaseURL(text)
        } throws: { error in
            guard case DatabaseError.invalidURL = error else { return false }
            return "\(error)".contains("port of db must be from 1 to 65535") && !"\(error)".contains("secret")
        }
    }
}

/// libpq's list of hosts, `host1:port1,host2:port2`, and `target_session_attrs`.
@Suite struct MultiHostDatabaseURLTests {
    @Test func readsEveryHostInOrderWithItsPort() throws {
        let url = try DatabaseURL("postgres://u:secret@db1:5433,db2,[::1]:6000,10.0.0.9:5434/blimp?target_session_attrs=primary")
        #expect(url.endpoints.map(\.description) == ["db1:5433", "db2:5432", "[::1]:6000", "10.0.0.9:5434"])
        #expect(url.endpoints[2].host == "::1")
        #expect(url.target == .primary)
        #expect(url.username == "u" && url.password == "secret" && url.database == "blimp")
        #expect(url.description == "postgres://u@db1:5433,db2:5432,[::1]:6000,10.0.0.9:5434/blimp?target_session_attrs=primary")
        #expect(url.clientConfiguration(for: url.endpoints[1]).host == "db2")
    }

    @Test func defaultsToTheServerThatTakesWrites() throws {
        #expect(try DatabaseURL("postgres://u@db/blimp").target == .readWrite)
        #expect(try DatabaseURL("postgres://u@db/blimp?target_session_attrs=any").target == .any)
        #expect(try DatabaseURL("postgres://u@db/blimp?target_session_attrs=read-write").description == "postgres://u@db:5432/blimp")
    }

    @Test(arguments: [
        ("postgres://u:secret@db1,,db2/blimp", "it names no host"),
        ("postgres://u:secret@/blimp", "it names no host"),
        ("postgres://u:secret@db1,/blimp", "it names no host"),
        ("postgres://u:secret@db1,db2:0/blimp", "the port of db2 must be from 1 to 65535"),
        ("postgres://u:secret@db1,db2:x/blimp", "the port of db2 must be from 1 to 65535"),
        ("postgres://u:secret@db/blimp?target_session_attrs=read-only", "target_session_attrs must be one of read-write, primary, any"),
        ("postgres://u:secret@db/blimp?target_session_attrs=standby", "target_session_attrs must be one of read-write, primary, any"),
        ("postgres://u:secret@\((1...17).map { "db\($0)" }.joined(separator: ","))/blimp", "it names 17 hosts; at most 16 are allowed"),
    ])
    func refusesBadHostListsClearly(_ text: String, _ message: String) {
        #expect {
            try DatabaseURL(text)
        } throws: { error in
            guard case DatabaseError.invalidURL = error else { return false }
            return "\(error)".contains(message) && !"\(error)".contains("secret")
        }
    }

    @Test func takesSixteenHosts() throws {
        #expect(try DatabaseURL("postgres://u@\((1...16).map { "db\($0)" }.joined(separator: ","))/blimp").endpoints.count == 16)
    }
}
