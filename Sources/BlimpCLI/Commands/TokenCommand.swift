import ArgumentParser
import BlimpStore

/// `blimp apps token`: bearer tokens for an app's server API, an alternative to its master secret that can be
/// revoked on its own. Clients send `Authorization: Bearer <token>` with `X-UA-Appkey: <app key>`.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Issue and revoke bearer tokens for an app's server API.",
        subcommands: [Create.self, Revoke.self]
    )

    /// `blimp apps token create`: prints the new token (shown only once).
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a token and print it (it is shown only once).")

        @Option(help: "The app's key.") var appKey: String
        @Option(help: "A name for the token, unique in the app, to revoke it by.") var name: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let logger = self.logging.makeLogger(label: "blimp.apps")
            let token = try await self.database.resolve().withClient(logger: logger) { client in
                try await AppStore(client: client, logger: logger).createToken(appKey: self.appKey, name: self.name)
            }
            print(token)
        }
    }

    /// `blimp apps token revoke`: the token stops working within the API's credential cache time (30 s).
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by name.")

        @Option(help: "The app's key.") var appKey: String
        @Option(help: "The token's name.") var name: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let logger = self.logging.makeLogger(label: "blimp.apps")
            let revoked = try await self.database.resolve().withClient(logger: logger) { client in
                try await AppStore(client: client, logger: logger).revokeToken(appKey: self.appKey, name: self.name)
            }
            guard revoked else { throw CLIError("the app has no token named \(self.name)") }
            print("revoked \(self.name)")
        }
    }
}
