import ArgumentParser
import BlimpCore
import BlimpStore
import Foundation

/// `blimp accounts`: people who sign in to the console, and their roles per app.
struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "Give people console accounts with a role per app (viewer, sender, admin), list, change and remove them.",
        subcommands: [Create.self, List.self, Remove.self, SetRole.self]
    )

    /// `blimp accounts create`: the password is read from standard input (its first line); when standard input is a
    /// terminal or empty, one is generated and printed, this once.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a person a role in an app, creating their account if it is new.",
            discussion: """
                A new account's password is the first line of standard input (12 to 1,024 bytes), e.g. \
                `printf '%s\\n' "$PASSWORD" | blimp accounts create …`. When standard input is a terminal or empty, a \
                password is generated and printed once. An existing account keeps its password.
                """
        )

        @Option(help: "The person's email.") var email: String
        @Option(help: "The app's key.") var appKey: String
        @Option(help: "viewer, sender or admin.") var role: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let email = try EmailAddress(self.email)
            let role = try ConsoleRole(named: self.role)
            let typed = Self.readPassword()
            let password = try typed.map { typed throws(AccountRuleError) in try Password.checked(typed) } ?? Password.generate()
            let added = try await self.database.withAccountStore(logging: self.logging) { accounts in
                try await accounts.add(email: email, appKey: self.appKey, role: role, by: .commandLine) { await PasswordHasher.hash(password) }
            }
            if !added.created {
                print("\(email) is now \(role.rawValue) in app \(self.appKey) (an existing account: its password is unchanged)")
            } else if typed == nil {
                print("created \(email) as \(role.rawValue) in app \(self.appKey); password (shown only once): \(password)")
            } else {
                print("created \(email) as \(role.rawValue) in app \(self.appKey)")
            }
        }

        /// The first line of standard input; `nil` when it is a terminal or empty.
        static func readPassword() -> String? {
            guard isatty(STDIN_FILENO) == 0, let line = readLine(strippingNewline: true), !line.isEmpty else { return nil }
            return line
        }
    }

    /// `blimp accounts list`: people and their roles, never passwords.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List people with their roles (every app, or one).")

        @Option(help: "Only this app's people.") var appKey: String?
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let accounts = try await self.database.withAccountStore(logging: self.logging) { try await $0.list(appKey: self.appKey) }
            print(AppListing.table(accounts))
        }
    }

    /// `blimp accounts remove`: from one app, or the whole account; their console sessions end at once.
    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a person from an app, or (without --app-key) delete their account; their sessions end at once.")

        @Option(help: "The person's email.") var email: String
        @Option(help: "Remove them from this app only.") var appKey: String?
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let email = try EmailAddress(self.email)
            let removed = try await self.database.withAccountStore(logging: self.logging) { try await $0.remove(email: email, appKey: self.appKey, by: .commandLine) }
            guard removed else { throw CLIError(self.appKey.map { "\(email) has no role in app \($0)" } ?? "there is no account \(email)") }
            print(self.appKey.map { "removed \(email) from app \($0)" } ?? "deleted the account \(email)")
        }
    }

    /// `blimp accounts set-role`: the person's sessions end, so the new role applies at once.
    struct SetRole: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-role", abstract: "Change a person's role in an app; their sessions end at once.")

        @Option(help: "The person's email.") var email: String
        @Option(help: "The app's key.") var appKey: String
        @Option(help: "viewer, sender or admin.") var role: String
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func run() async throws {
            let email = try EmailAddress(self.email)
            let role = try ConsoleRole(named: self.role)
            let changed = try await self.database.withAccountStore(logging: self.logging) {
                try await $0.setRole(email: email, appKey: self.appKey, role: role, by: .commandLine)
            }
            guard changed else { throw CLIError("\(email) has no role in app \(self.appKey)") }
            print("\(email) is now \(role.rawValue) in app \(self.appKey)")
        }
    }
}

extension DatabaseOptions {
    /// Runs `body` with the accounts of the configured database.
    func withAccountStore<T>(logging: LoggingOptions, _ body: (AccountStore) async throws -> T) async throws -> T {
        let logger = logging.makeLogger(label: "blimp.accounts")
        return try await self.resolve().withDatabase(logger: logger) { client in try await body(AccountStore(client: client, logger: logger)) }
    }
}
