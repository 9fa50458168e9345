import ArgumentParser
import BlimpStore

/// `blimp apps scheduling`: how an app's schedules (`/api/schedules`) fire.
struct SchedulingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scheduling",
        abstract: "Set how late an app's schedules may still fire after Blimp was down, and the time zone of its channels without one.",
        discussion: """
            An occurrence found later than the grace period (Blimp was down at its time) is recorded as missed, not \
            sent. A local-time schedule fires in each channel's time zone; a channel whose zone is missing or unknown \
            to PostgreSQL is in the default one.
            """
    )

    @Option(help: "The app's key.") var appKey: String
    @Option(help: "Seconds, 0 to 604800 (default 3600).") var graceSeconds: Int?
    @Option(help: "An IANA time zone PostgreSQL knows, e.g. Europe/Berlin (default UTC).") var defaultTimeZone: String?
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        guard self.graceSeconds != nil || self.defaultTimeZone != nil else { throw CLIError("give --grace-seconds, --default-time-zone or both") }
        if let grace = self.graceSeconds, !(0...604_800).contains(grace) { throw CLIError("--grace-seconds is 0 to 604800") }
        try await self.database.withAppStore(logging: self.logging) {
            try await $0.setScheduling(graceSeconds: self.graceSeconds, defaultTimeZone: self.defaultTimeZone, appKey: self.appKey)
        }
        print("scheduling set")
    }
}
