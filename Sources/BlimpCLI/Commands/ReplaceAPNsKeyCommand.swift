import ArgumentParser
import BlimpCore
import BlimpStore

/// `blimp apps replace-apns-key`: a new `.p8` signing key for an app (Apple's keys can be revoked and reissued), and
/// optionally its APNs environment.
struct ReplaceAPNsKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replace-apns-key",
        abstract: "Replace an app's APNs auth key (.p8), and optionally its APNs environment.",
        discussion: "Workers read an app's key at most a minute before they use it, so pushes go out with the new key within 60 s."
    )

    @Option(help: "The app's key.") var appKey: String
    @Option(help: "Apple's APNs auth key file (AuthKey_<KEYID>.p8).") var p8: String
    @Option(help: "The key's 10-character key id.") var keyId: String
    @Option(help: "The 10-character Apple team id.") var teamId: String
    @Option(help: "sandbox or production; unchanged when not given.") var environment: APNsEnvironment?
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let key = try APNsSigningKey(pem: try readKeyFile(self.p8), keyID: self.keyId, teamID: self.teamId)
        let serverKey = try ServerKeySetting.resolve()
        let app = try await self.database.withAppStore(logging: self.logging) {
            try await $0.replaceAPNsKey(appKey: self.appKey, signingKey: key, environment: self.environment, serverKey: serverKey)
        }
        print("APNs key \(app.apnsKeyID) of team \(app.apnsTeamID), \(app.apnsEnvironment.rawValue)")
    }
}
