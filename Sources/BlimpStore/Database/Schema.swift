import Foundation
import Logging
import PostgresNIO

/// The database schema: `schema.sql` at the package root, compiled into the binary, as a list of versioned
/// migrations.
///
/// The file is read top to bottom: what comes before the first `-- version N: name` line is version 1, and each such
/// line starts the next version. Each version is applied once, in one transaction, and recorded in
/// `schema_migrations`; `apply` skips what is recorded. Version 1's statements are idempotent, so a database set up
/// before versions were recorded takes it again harmlessly and is recorded as at version 1.
///
/// A version must be safe to apply while the previous release of Blimp still serves (expand, then contract one
/// release later): add columns nullable or with a default, add CHECKs `NOT VALID` and validate them separately,
/// never rename or drop what the previous release reads.
public enum Schema {
    /// One version of the schema.
    public struct Migration: Sendable, Equatable {
        public let version: Int
        public let name: String
        /// Its statements, in file order.
        public let statements: [String]
    }

    /// A migration and when it was applied (`nil`: pending).
    public struct Status: Sendable {
        public let version: Int
        public let name: String
        public let appliedAt: Date?
    }

    /// Every version of the schema, oldest first.
    public static let migrations: [Migration] = migrations(in: String(decoding: PackageResources.schema_sql, as: UTF8.self))

    /// The newest version this binary knows.
    public static var latestVersion: Int { Self.migrations.last?.version ?? 0 }

    /// Applies the versions the database does not have yet, each in its own transaction, and returns them. An
    /// advisory lock makes concurrent runs (several processes migrating at start-up) wait for each other; the later
    /// runs then find nothing left to do.
    @discardableResult
    public static func apply(to client: PostgresClient, logger: Logger) async throws(DatabaseError) -> [Migration] {
        var applied: [Migration] = []
        do {
            for migration in Self.migrations {
                let ran = try await client.withTransaction(logger: logger) { connection in
                    try await connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: Self.createHistory), logger: logger)
                    let recorded = try await connection.query(
                        "SELECT 1 FROM schema_migrations WHERE version = \(migration.version)", logger: logger
                    ).collect()
                    guard recorded.isEmpty else { return false }
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: logger)
                    return true
                }
                if ran {
                    logger.info("migration applied", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                    applied.append(migration)
                }
            }
        } catch {
            throw .migrationFailed(reason: DatabaseError.reason(for: error))
        }
        return applied
    }

    /// Every version this binary knows, with when it was applied, followed by any version recorded by a newer
    /// binary (named as it was recorded).
    public static func status(of client: PostgresClient, logger: Logger) async throws(DatabaseError) -> [Status] {
        do {
            var recorded: [Int: (name: String, at: Date)] = [:]
            let history = try await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
            if try await history.decode(Bool.self).array() == [true] {
                let rows = try await client.query("SELECT version, name, applied_at FROM schema_migrations", logger: logger)
                for try await (version, name, at) in rows.decode((Int, String, Date).self) { recorded[version] = (name, at) }
            }
            let known = Self.migrations.map { Status(version: $0.version, name: $0.name, appliedAt: recorded[$0.version]?.at) }
            let newer = recorded.keys.filter { $0 > Self.latestVersion }.sorted().map {
                Status(version: $0, name: recorded[$0]!.name, appliedAt: recorded[$0]!.at)
            }
            return known + newer
        } catch {
            throw .migrationFailed(reason: DatabaseError.reason(for: error))
        }
    }

    /// The history table, created under the lock before a migration reads it (idempotent).
    private static let createHistory = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    integer PRIMARY KEY,
            name       text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )
        """

    /// An arbitrary, fixed key for `pg_advisory_xact_lock` ("blimp" in ASCII).
    static let advisoryLockKey: Int64 = 0x62_6C_69_6D_70

    /// Cuts schema text into versions at `-- version N: name` lines; what precedes the first is version 1,
    /// "baseline". Versions must count up by one.
    static func migrations(in sql: String) -> [Migration] {
        var migrations: [Migration] = []
        var current = (version: 1, name: "baseline", lines: [Substring]())
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let (version, name) = Self.versionMarker(line) else {
                current.lines.append(line)
                continue
            }
            precondition(version == current.version + 1, "schema.sql: version \(version) follows version \(current.version)")
            migrations.append(Migration(version: current.version, name: current.name, statements: Self.split(current.lines)))
            current = (version, name, [])
        }
        migrations.append(Migration(version: current.version, name: current.name, statements: Self.split(current.lines)))
        return migrations
    }

    /// `(N, name)` for a line `-- version N: name`.
    private static func versionMarker(_ line: Substring) -> (Int, String)? {
        guard line.hasPrefix("-- version ") else { return nil }
        let rest = line.dropFirst("-- version ".count)
        guard let colon = rest.firstIndex(of: ":"), let version = Int(rest[..<colon]) else { return nil }
        return (version, rest[rest.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// Splits SQL text into statements: comment lines are dropped, and a statement ends with a line ending in `;`
    /// (postgres-nio sends each query as one prepared statement, so the file keeps to that form: no `$$` bodies).
    static func split(_ sql: String) -> [String] {
        Self.split(sql.split(separator: "\n", omittingEmptySubsequences: false))
    }

    private static func split(_ lines: [Substring]) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("--") { continue }
            current.append(line)
            if trimmed.hasSuffix(";") {
                statements.append(current.joined(separator: "\n"))
                current = []
            }
        }
        if !current.isEmpty { statements.append(current.joined(separator: "\n")) }
        return statements
    }
}
