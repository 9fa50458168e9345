import ArgumentParser
import BlimpStore

/// `blimp apps send-events`: whether the app's event stream carries a `SEND` per device sent.
struct SendEventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send-events",
        abstract: "Write a SEND event per device sent to the app's event stream (on, the default), or stop (off).",
        discussion: """
            A push to a million devices writes a million SEND events, which POST /api/events streams and the janitor \
            deletes after BLIMP_RETENTION_EVENTS. With off, the app's stream keeps its other events (PUSH_BODY, \
            SEND_REJECTED); the change applies to sends recorded from then on, and is on the audit trail.
            """
    )

    enum Setting: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @Option(help: "The app's key.") var appKey: String
    @Argument(help: "on or off.") var setting: Setting
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        try await self.database.withAppStore(logging: self.logging) { try await $0.setSendEvents(self.setting == .on, appKey: self.appKey) }
        print("send events: \(self.setting.rawValue)")
    }
}
