import ArgumentParser
import BlimpStore
import Foundation

/// `--database-direct-url`, or `DATABASE_DIRECT_URL`: PostgreSQL itself, for what needs a session of its own when the
/// database URL goes through a transaction pooler (`?pooler=transaction`).
struct DirectDatabaseOptions: ParsableArguments {
    @Option(
        help: """
            PostgreSQL itself, when --database-url goes through a transaction pooler: for migrations, the workers' \
            LISTEN and the API's janitor. Defaults to $DATABASE_DIRECT_URL.
            """
    )
    var databaseDirectURL: String?

    /// Where what needs a session of its own connects: `url` itself unless it goes through a transaction pooler, else
    /// the direct URL, or `nil` when none is set. A direct URL that names a pooler is refused.
    func sessionURL(beside url: DatabaseURL) throws -> DatabaseURL? {
        guard url.pooled else { return url }
        let environment = ProcessInfo.processInfo.environment["DATABASE_DIRECT_URL"].flatMap { $0.isEmpty ? nil : $0 }
        guard let text = self.databaseDirectURL ?? environment else { return nil }
        let direct: DatabaseURL
        do {
            direct = try DatabaseURL(text)
        } catch {
            // DatabaseURL's own error names DATABASE_URL.
            guard case DatabaseError.invalidURL(let reason) = error else { throw error }
            throw CLIError("DATABASE_DIRECT_URL is not a valid PostgreSQL URL: \(reason)")
        }
        guard !direct.pooled else { throw CLIError("DATABASE_DIRECT_URL must reach PostgreSQL itself, not a pooler") }
        return direct
    }
}
