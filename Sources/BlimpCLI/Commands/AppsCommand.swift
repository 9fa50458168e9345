import ArgumentParser
import BlimpCore
import BlimpStore
import Foundation

/// `blimp apps`: create and list apps (tenants) and manage their credentials.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Create and list apps, rotate their secrets, replace their APNs keys, and issue their server API tokens.",
        subcommands: [
            Create.self, List.self, TokenCommand.self, RotateMasterSecretCommand.self, RotateAppSecretCommand.self,
            ReplaceAPNsKeyCommand.self, BudgetCommand.self, DeviceAssociationCommand.self, SchedulingCommand.self,
            RetentionCommand.self, SendEventsCommand.self,
        ]
    )

    /// `blimp apps create`: prints the new app's credentials as one JSON object.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an app and print its key and secrets as JSON (the secrets are shown only once)."
        )

        @Option(help: "A unique name for the app.") var name: String
        @Option(help: "The iOS bundle id, e.g. com.example.app.") var bundleId: String
        @Option(help: "Apple's APNs auth key file (AuthKey_<KEYID>.p8).") var apnsKeyFile: String
        @Option(help: "The key's 10-character key id.") var apnsKeyId: String
        @Option(help: "The 10-character Apple team id.") var apnsTeamId: String
        @Option(help: "sandbox or production.") var apnsEnvironment: APNsEnvironment = .production
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let app = try NewApp(
                name: self.name,
                bundleID: self.bundleId,
                signingKey: APNsSigningKey(
                    pem: try readKeyFile(self.apnsKeyFile),
                    keyID: self.apnsKeyId,
                    teamID: self.apnsTeamId
                ),
                environment: self.apnsEnvironment
            )
            let serverKey = try ServerKeySetting.resolve()
            let credentials = AppCredentials.issue()
            _ = try await self.database.withAppStore(logging: self.logging) { apps in
                try await apps.create(app, credentials: credentials, serverKey: serverKey)
            }
            print(try CreatedApp(app: app, credentials: credentials).json())
        }
    }

    /// `blimp apps list`: every app, without secrets.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List apps (never their secrets).")

        @Flag(help: "Print a JSON array instead of a table.") var json = false
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let apps = try await self.database.withAppStore(logging: self.logging) { try await $0.list() }
            print(self.json ? try AppListing.json(apps) : AppListing.table(apps))
        }
    }
}

/// Reads a `.p8` file, or fails with one line naming it.
func readKeyFile(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw CLIError("cannot read the APNs key file \(path)")
    }
    return String(decoding: data, as: UTF8.self)
}

extension APNsEnvironment: ExpressibleByArgument {}
