import BlimpStore
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

    /// Creates a database, applies the schema when `migrated`, runs `body` with its URL and a running client, and
    /// drops the database afterwards.
    public static func withFreshDatabase<T>(
        migrated: Bool = true,
        _ body: (_ url: String, _ client: PostgresClient) async throws -> T
    ) async throws -> T {
        guard let serverURL = environment["DATABASE_URL"] else { throw NotConfigured() }
        let name = "blimp_test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try await Self.admin(serverURL, "CREATE DATABASE \(name)")
        let url = Self.url(serverURL, database: name)
        do {
            let result = try await DatabaseURL(url).withClient(logger: Self.logger) { client in
                if migrated { try await Schema.apply(to: client, logger: Self.logger) }
                return try await body(url, client)
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

    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "DATABASE_URL is not set: database tests need PostgreSQL (run them with scripts/test, which starts one)"
        }
    }

    private static let environment = ProcessInfo.processInfo.environment

    private static func admin(_ serverURL: String, _ sql: String) async throws {
        _ = try await DatabaseURL(serverURL).withClient(logger: Self.logger) { client in
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
