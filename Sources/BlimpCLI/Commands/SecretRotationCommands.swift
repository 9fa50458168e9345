import ArgumentParser
import BlimpCore
import BlimpStore
import Foundation

/// `blimp apps rotate-master-secret`: prints the new master secret (shown only once).
struct RotateMasterSecretCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-master-secret",
        abstract: "Issue a new master secret and print it (it is shown only once); the old one stops working.",
        discussion: """
            The old master secret is refused at once, except by API processes that read the app's credentials in the \
            last 30 s, which refuse it within 30 s. Server API tokens keep working (blimp apps token revoke).
            """
    )

    @Option(help: "The app's key.") var appKey: String
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let secret = try await self.database.withAppStore(logging: self.logging) { try await $0.rotateMasterSecret(appKey: self.appKey) }
        print(secret)
    }
}

/// `blimp apps rotate-app-secret`: prints the new app secret (shown only once); the previous one keeps working for
/// `--overlap`, so that the apps already installed, which carry it, keep registering until users update.
struct RotateAppSecretCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-app-secret",
        abstract: "Issue a new app secret and print it (it is shown only once); the previous one works for --overlap more.",
        discussion: """
            The app secret ships inside every installed app (Basic authentication and the SDK's signed requests), so \
            the previous secret stays valid for the overlap while users update to a build with the new one: up to \
            90 days, 0 to refuse it at once (within 30 s on API processes that read the app's credentials in the \
            last 30 s). Only one previous secret is kept: rotating again ends the earlier one's overlap.
            Example: blimp apps rotate-app-secret --app-key KEY --overlap 30d
            """
    )

    @Option(help: "The app's key.") var appKey: String
    @Option(help: "How long the previous secret stays valid: seconds, or with a unit, e.g. 7d, 12h, 30m, 0.")
    var overlap: DurationArgument
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let serverKey = try ServerKeySetting.resolve()
        let secret = try await self.database.withAppStore(logging: self.logging) {
            try await $0.rotateAppSecret(appKey: self.appKey, overlap: self.overlap.seconds, serverKey: serverKey)
        }
        print(secret)
        let note = self.overlap.seconds > 0
            ? "the previous app secret stays valid until about \(Date(timeIntervalSinceNow: self.overlap.seconds).formatted(.iso8601))"
            : "the previous app secret is no longer valid"
        FileHandle.standardError.write(Data("\(note)\n".utf8))
    }
}
