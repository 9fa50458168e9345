import Foundation
import Logging
import PostgresNIO

/// The database schema: `schema.sql` at the package root, compiled into the binary.
public enum Schema {
    /// The schema's statements, in file order.
    ///
    /// postgres-nio sends each query as one prepared statement, so the file is split at every `;` that ends a line.
    /// `schema.sql` keeps to that form (no `$$` bodies).
    public static let statements: [String] = split(String(decoding: PackageResources.schema_sql, as: UTF8.self))

    /// Applies every statement in one transaction. Statements are idempotent, so applying twice is harmless, and an
    /// advisory lock makes concurrent runs (several processes migrating at start-up) wait for each other.
    public static func apply(to client: PostgresClient, logger: Logger) async throws(DatabaseError) {
        do {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger)
                for statement in Self.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
        } catch {
            throw .migrationFailed(reason: DatabaseError.reason(for: error))
        }
    }

    /// An arbitrary, fixed key for `pg_advisory_xact_lock` ("blimp" in ASCII).
    static let advisoryLockKey: Int64 = 0x62_6C_69_6D_70

    /// Splits SQL text into statements: comment lines are dropped, and a statement ends with a line ending in `;`.
    static func split(_ sql: String) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
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
