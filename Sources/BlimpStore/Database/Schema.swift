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
/// A version marked `-- version N, no transaction: name` runs its statements one at a time, each committed alone: for
/// `CREATE INDEX CONCURRENTLY`, which cannot run in a transaction and does not hold writes back while it builds. Its
/// statements must be safe to run again after a failure midway (drop a half-built index `IF EXISTS` first).
///
/// A version must be safe to apply while the previous release of Blimp still serves (expand, then contract one
/// release later): add columns nullable or with a default, add CHECKs `NOT VALID` and validate them separately,
/// build indexes on large tables concurrently, never rename or drop what the previous release reads.
public enum Schema {
    /// One version of the schema.
    public struct Migration: Sendable, Equatable {
        public let version: Int
        public let name: String
        /// Its statements, in file order.
        public let statements: [String]
        /// Whether its statements run in one transaction (else each alone).
        public var transactional = true
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

    /// Applies the versions the database does not have yet (up to `version`: tests build a previous release's schema),
    /// in order, and returns them. An advisory lock makes concurrent runs (several processes migrating at start-up)
    /// take turns; the later runs then find nothing left to do. They wait by polling, not in a lock queue: a run
    /// waiting inside a statement would hold a snapshot, which `CREATE INDEX CONCURRENTLY` in the running one waits
    /// for.
    @discardableResult
    public static func apply(
        to client: Database, through version: Int = .max, logger: Logger
    ) async throws(DatabaseError) -> [Migration] {
        do {
            return try await client.withConnection { connection in
                while try await connection.query("SELECT pg_try_advisory_lock(\(Self.advisoryLockKey))", logger: logger)
                    .decode(Bool.self).array() != [true]
                {
                    try await Task.sleep(for: .milliseconds(100))
                }
                do {
                    let applied = try await Self.applyPending(through: version, on: connection, logger: logger)
                    try await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
                    return applied
                } catch {
                    // The lock is the session's: a connection that goes back to the pool must not keep it.
                    _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
                    throw error
                }
            }
        } catch {
            throw .migrationFailed(reason: DatabaseError.reason(for: error))
        }
    }

    /// Applies each version up to `version` not recorded yet, under the lock.
    private static func applyPending(through version: Int, on connection: PostgresConnection, logger: Logger) async throws -> [Migration] {
        try await connection.query(PostgresQuery(unsafeSQL: Self.createHistory), logger: logger)
        let recorded = Set(try await connection.query("SELECT version FROM schema_migrations", logger: logger).decode(Int.self).array())
        var applied: [Migration] = []
        for migration in Self.migrations where migration.version <= version && !recorded.contains(migration.version) {
            let record: PostgresQuery = "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))"
            if migration.transactional {
                try await connection.withTransaction(logger: logger) { connection in
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(record, logger: logger)
                }
            } else {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(record, logger: logger)
            }
            logger.info("migration applied", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            applied.append(migration)
        }
        return applied
    }

    /// Every version this binary knows, with when it was applied, followed by any version recorded by a newer
    /// binary (named as it was recorded).
    public static func status(of client: Database, logger: Logger) async throws(DatabaseError) -> [Status] {
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

    /// An arbitrary, fixed key for the migrations' advisory lock ("blimp" in ASCII).
    static let advisoryLockKey: Int64 = 0x62_6C_69_6D_70

    /// Cuts schema text into versions at `-- version N: name` (or `-- version N, no transaction: name`) lines; what
    /// precedes the first is version 1, "baseline". Versions must count up by one.
    static func migrations(in sql: String) -> [Migration] {
        var migrations: [Migration] = []
        var current = (marker: Marker(version: 1, name: "baseline", transactional: true), lines: [Substring]())
        func close() {
            migrations.append(
                Migration(
                    version: current.marker.version, name: current.marker.name, statements: Self.split(current.lines),
                    transactional: current.marker.transactional))
        }
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let marker = Marker(line) else {
                current.lines.append(line)
                continue
            }
            precondition(marker.version == current.marker.version + 1, "schema.sql: version \(marker.version) follows version \(current.marker.version)")
            close()
            current = (marker, [])
        }
        close()
        return migrations
    }

    /// A `-- version N: name` or `-- version N, no transaction: name` line.
    private struct Marker {
        var version: Int
        var name: String
        var transactional: Bool

        init(version: Int, name: String, transactional: Bool) {
            self.version = version
            self.name = name
            self.transactional = transactional
        }

        init?(_ line: Substring) {
            guard line.hasPrefix("-- version ") else { return nil }
            let rest = line.dropFirst("-- version ".count)
            guard let colon = rest.firstIndex(of: ":") else { return nil }
            let head = rest[..<colon]
            let transactional = !head.hasSuffix(", no transaction")
            guard let version = Int(transactional ? head : head.dropLast(", no transaction".count)) else { return nil }
            self.init(version: version, name: rest[rest.index(after: colon)...].trimmingCharacters(in: .whitespaces), transactional: transactional)
        }
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
