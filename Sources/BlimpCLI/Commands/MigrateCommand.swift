import ArgumentParser
import BlimpStore

/// `blimp migrate`: applies schema.sql; safe to run any number of times.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the database schema (idempotent)."
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.migrate")
        let url = try self.database.resolve()
        try await url.withClient(logger: logger) { client in
            try await Schema.apply(to: client, logger: logger)
        }
        print("migrated \(url): \(Schema.statements.count) statements applied")
    }
}
