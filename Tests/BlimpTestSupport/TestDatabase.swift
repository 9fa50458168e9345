import BlimpStore
import Crypto
import Foundation
import Logging
import PostgresNIO

/// A fresh PostgreSQL database per test, on the server `DATABASE_URL` names (the test command starts one).
///
/// Suites gate on ``isEnabled``: without `DATABASE_URL` they are skipped locally, but under `CI=true` they run and
/// fail loudly, so a CI without a database never passes by skipping.
public enum TestDatabase {
    /// Whether database suites should run: a database is configured, or this is CI (where its absence fails).
    public static let isEnabled =
        environment["DATABASE_URL"] != nil || environment["CI"] == "true"

    /// Creates a database, migrated when `migrated` (a copy of ``migratedTemplate``), empty otherwise, runs `body`
    /// with its URL and a running client, and drops the database afterwards.
    public static func withFreshDatabase<T>(
        migrated: Bool = true,
        _ body: (_ url: String, _ client: Database) async throws -> T
    ) async throws -> T {
        guard let serverURL = environment["DATABASE_URL"] else { throw NotConfigured() }
        let name = Self.uniqueName("blimp_test")
        let template = migrated ? try await Self.migratedTemplate.value : "template1"
        try await Self.admin(serverURL, "CREATE DATABASE \(name) TEMPLATE \(template)")
        let url = Self.url(serverURL, database: name)
        do {
            let result = try await DatabaseURL(url).withDatabase(logger: Self.logger) { client in
                try await body(url, client)
            }
            try await Self.admin(serverURL, "DROP DATABASE \(name) WITH (FORCE)")
            return result
        } catch {
            try? await Self.admin(serverURL, "DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
    }

    /// A logger for test plumbing (quiet unless `LOG_LEVEL` says otherwise).
    public static let logger: Logger = {
        var logger = Logger(label: "blimp.tests")
        logger.logLevel = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }()

    /// Runs `body` with a running client of a database that cannot be reached (port 1 on loopback: nothing listens, so
    /// every connection attempt fails and the pool keeps retrying) and a logger that says nothing.
    public static func withUnreachableDatabase<T>(_ body: (_ client: Database, _ logger: Logger) async throws -> T) async throws -> T {
        var quiet = Logger(label: "blimp.tests.unreachable")
        quiet.logLevel = .critical
        let client = Database(url: try DatabaseURL("postgres://blimp@127.0.0.1:1/blimp"), pool: "unreachable", logger: quiet)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client, quiet)
        }
    }

    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "DATABASE_URL is not set: database tests need PostgreSQL (run them with scripts/test, which starts one)"
        }
    }

    private static let environment = ProcessInfo.processInfo.environment

    /// The name of a database holding this build's schema, migrated once and copied by every migrated fresh database.
    ///
    /// Migrating each test's database itself meant a hundred migrations at once when a run starts, and PostgreSQL on
    /// two cores then missed the deadlines under test. The name carries a digest of the migrations, so a run reuses
    /// the template an earlier run of the same schema left, and a changed schema gets its own. It is migrated under a
    /// name of its own and renamed when complete, so a template by that name is always whole, and processes racing
    /// to make it agree on one.
    static let migratedTemplate = Task<String, any Error> {
        guard let serverURL = environment["DATABASE_URL"] else { throw NotConfigured() }
        let digest = SHA256.hash(data: Data(Schema.migrations.map { "\($0.version) \($0.name)\n\($0.statements.joined(separator: "\n"))" }
            .joined(separator: "\n").utf8))
        let template = "blimp_template_" + digest.prefix(8).map { String(format: "%02x", $0) }.joined()
        let exists = try await DatabaseURL(serverURL).withDatabase(logger: Self.logger) { client in
            try await client.query("SELECT 1 FROM pg_database WHERE datname = \(template)", logger: Self.logger)
                .collect().count == 1
        }
        if exists { return template }
        let staging = Self.uniqueName("blimp_staging")
        try await Self.admin(serverURL, "CREATE DATABASE \(staging)")
        do {
            _ = try await DatabaseURL(Self.url(serverURL, database: staging)).withDatabase(logger: Self.logger) { client in
                try await Schema.apply(to: client, logger: Self.logger)
            }
            try await Self.admin(serverURL, "ALTER DATABASE \(staging) RENAME TO \(template)")
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P04" {
            // Another process made it first (duplicate_database): use theirs.
            try await Self.admin(serverURL, "DROP DATABASE \(staging) WITH (FORCE)")
        } catch {
            try? await Self.admin(serverURL, "DROP DATABASE \(staging) WITH (FORCE)")
            throw error
        }
        return template
    }

    /// `prefix` followed by a random suffix: a database name no other test uses.
    private static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
    }

    private static func admin(_ serverURL: String, _ sql: String) async throws {
        _ = try await DatabaseURL(serverURL).withDatabase(logger: Self.logger) { client in
            try await client.query(PostgresQuery(unsafeSQL: sql), logger: Self.logger)
        }
    }

    /// `serverURL` with its database replaced.
    private static func url(_ serverURL: String, database: String) -> String {
        var components = URLComponents(string: serverURL)!
        components.path = "/" + database
        return components.string!
    }
}
