import ArgumentParser
import BlimpCore
import BlimpStore

/// `blimp apps retention`: how long an app's finished pushes, delivery outcomes, audit entries and events are kept,
/// where they differ from the deployment's (`BLIMP_RETENTION_*`).
struct RetentionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Set how long an app's pushes, delivery outcomes, audit entries and events are kept, or go back to the deployment's.",
        discussion: """
            Each is a whole number and a unit: 90s, 15m, 12h or 30d; pushes (counted from when a push finished) at \
            least 24h, outcomes at least 1h, events at least 24h, each at most 3650d. Those not given stay as they are; \
            --default makes the app keep all the deployment's. The janitor applies a change at its next round; it is on \
            the audit trail.
            """
    )

    @Option(help: "The app's key.") var appKey: String
    @Option(help: "How long finished pushes and their reports are kept.") var pushes: String?
    @Option(help: "How long delivery outcomes and send tallies are kept.") var outcomes: String?
    @Option(help: "How long audit entries are kept.") var audit: String?
    @Option(help: "How long the event stream's events are kept.") var events: String?
    @Flag(name: .customLong("default"), help: "Keep the deployment's retentions instead of the app's own.") var useDefault = false
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        let given = [self.pushes, self.outcomes, self.audit, self.events].contains { $0 != nil }
        guard given != self.useDefault else { throw ValidationError("give --pushes, --outcomes, --audit or --events, or --default alone") }
        _ = try self.changes()
    }

    /// The settings to change, each to its new value (`nil`: the deployment's).
    private func changes() throws -> [RetentionPolicy.Setting: Duration?] {
        if self.useDefault { return Dictionary(uniqueKeysWithValues: RetentionPolicy.Setting.allCases.map { ($0, nil) }) }
        var changes: [RetentionPolicy.Setting: Duration?] = [:]
        let given = [(RetentionPolicy.Setting.pushes, self.pushes), (.outcomes, self.outcomes), (.audit, self.audit), (.events, self.events)]
        for (setting, text) in given {
            guard let text else { continue }
            do {
                changes[setting] = try RetentionPolicy.parse(text, for: setting)
            } catch {
                throw ValidationError("--\(setting.rawValue): \(error)")
            }
        }
        return changes
    }

    func run() async throws {
        let changes = try self.changes()
        try await self.database.withAppStore(logging: self.logging) { try await $0.setRetention(changes, appKey: self.appKey) }
        print("retention set")
    }
}
