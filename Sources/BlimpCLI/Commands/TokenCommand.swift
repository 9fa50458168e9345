import ArgumentParser
import BlimpStore

/// `blimp apps token`: bearer tokens for an app's server API, an alternative to its master secret that can be
/// revoked on its own. Clients send `Authorization: Bearer <token>` with `X-UA-Appkey: <app key>`.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Issue, list and revoke bearer tokens for an app's server API.",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    /// `blimp apps token create`: prints the new token (shown only once).
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a token and print it (it is shown only once).")

        @Option(help: "The app's key.") var appKey: String
        @Option(help: "A name for the token, unique in the app, to revoke it by.") var name: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let token = try await self.database.withAppStore(logging: self.logging) {
                try await $0.createToken(appKey: self.appKey, name: self.name)
            }
            print(token)
        }
    }

    /// `blimp apps token list`: the app's tokens by name, never the tokens themselves (only their digests are kept).
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's tokens by name, oldest first.")

        @Option(help: "The app's key.") var appKey: String
        @Flag(help: "Print a JSON array instead of a table.") var json = false
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let tokens = try await self.database.withAppStore(logging: self.logging) { try await $0.tokens(appKey: self.appKey) }
            print(self.json ? try AppListing.json(tokens) : AppListing.table(tokens))
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
            let revoked = try await self.database.withAppStore(logging: self.logging) {
                try await $0.revokeToken(appKey: self.appKey, name: self.name)
            }
            guard revoked else { throw CLIError("the app has no token named \(self.name)") }
            print("revoked \(self.name)")
        }
    }
}
