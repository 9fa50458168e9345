import ArgumentParser
import BlimpStore
import Foundation

/// `blimp migrate`: applies the schema's versions the database does not have yet; safe to run any number of times,
/// and while the previous release serves. `--status` lists the versions instead. It connects to PostgreSQL itself:
/// its advisory lock is the session's, which a transaction pooler does not keep.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the database schema's pending versions (each once; safe to run again)."
    )

    @Flag(help: "List the schema's versions and which are applied, and change nothing.") var status = false
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var direct: DirectDatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.migrate")
        guard let url = try self.direct.sessionURL(beside: self.database.resolve()) else {
            throw CLIError(
                "blimp migrate holds a lock across statements, which a transaction pooler does not keep: set DATABASE_DIRECT_URL to PostgreSQL itself")
        }
        // Building an index on a large table may take longer than the role's statement_timeout allows requests.
        try await url.withDatabase(statementTimeout: .zero, logger: logger) { client in
            if self.status {
                print(Self.describe(try await Schema.status(of: client, logger: logger)), terminator: "")
                return
            }
            let applied = try await Schema.apply(to: client, logger: logger)
            let versions = applied.isEmpty ? "none pending" : applied.map { "\($0.version) (\($0.name))" }.joined(separator: ", ")
            print("migrated \(url) to version \(Schema.latestVersion): applied \(versions)")
        }
    }

    /// One line per version: `2  hardening  applied 2026-11-23T14:00:00Z`, or `pending`, or from a newer blimp.
    static func describe(_ versions: [Schema.Status]) -> String {
        let width = versions.map(\.name.count).max() ?? 0
        return versions.map { status in
            let state =
                if let at = status.appliedAt {
                    "applied \(at.formatted(.iso8601))" + (status.version > Schema.latestVersion ? " (by a newer blimp)" : "")
                } else {
                    "pending"
                }
            return "\(status.version)  \(status.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(state)\n"
        }.joined()
    }
}
