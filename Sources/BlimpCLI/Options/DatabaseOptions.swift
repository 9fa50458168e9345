import ArgumentParser
import BlimpStore
import Foundation

/// `--database-url`, or `DATABASE_URL`.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "PostgreSQL URL, e.g. postgres://blimp@127.0.0.1:5432/blimp. Defaults to $DATABASE_URL.")
    var databaseURL: String?

    /// The parsed URL; throws a one-line error when it is missing or malformed.
    func resolve() throws(DatabaseError) -> DatabaseURL {
        guard let text = self.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"], !text.isEmpty else {
            throw .notConfigured
        }
        return try DatabaseURL(text)
    }
}

extension DatabaseOptions {
    /// Runs `body` with the apps of the configured database: what every `blimp apps` subcommand does.
    func withAppStore<T>(logging: LoggingOptions, _ body: (AppStore) async throws -> T) async throws -> T {
        let logger = logging.makeLogger(label: "blimp.apps")
        return try await self.resolve().withDatabase(logger: logger) { client in try await body(AppStore(client: client, logger: logger)) }
    }
}
