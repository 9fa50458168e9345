import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import Testing

/// `blimp accounts create`, `list`, `set-role` and `remove` as real processes.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct AccountsCommandTests {
    let serverKey = TestKeys.serverKeyBase64()

    @Test func accountsAreCreatedListedChangedAndRemoved() async throws {
        try await TestDatabase.withFreshDatabase { url, client in
            try await withTemporaryFolder { folder in
                let environment = ["DATABASE_URL": url, "BLIMP_SECRET_KEY": self.serverKey]
                let appKey = try await BlimpProcess.createScores(in: folder, environment: environment).credentials["app_key"]!
                let accounts = AccountStore(client: client, logger: TestDatabase.logger)
                let serverKey = try ServerKey(base64: self.serverKey)
                func run(_ arguments: [String], input: String? = "") async throws -> BlimpProcess.Result {
                    try await BlimpProcess.run(["accounts"] + arguments, environment: environment, input: input)
                }

                let typed = try await run(["create", "--email", "Ann@Example.com", "--app-key", appKey, "--role", "sender"], input: "my own password here\n")
                #expect(typed.status == 0, "\(typed.stderr)")
                #expect(typed.stdout == "created ann@example.com as sender in app \(appKey)\n")
                let ann = try #require(try await accounts.signIn(email: try EmailAddress("ann@example.com"), serverKey: serverKey))
                #expect(ann.passwordHash?.verify("my own password here") == true)

                let generated = try await run(["create", "--email", "bob@example.com", "--app-key", appKey, "--role", "viewer"])
                #expect(generated.status == 0, "\(generated.stderr)")
                let password = try #require(generated.stdout.split(separator: "shown only once): ").last).trimmingCharacters(in: .newlines)
                #expect(password.utf8.count == 44)
                let bob = try #require(try await accounts.signIn(email: try EmailAddress("bob@example.com"), serverKey: serverKey))
                #expect(bob.passwordHash?.verify(password) == true)

                let list = try await run(["list", "--app-key", appKey])
                #expect(list.status == 0 && list.stdout.hasPrefix("EMAIL"), "\(list.stderr)")
                #expect(list.stdout.contains("ann@example.com") && list.stdout.contains("sender") && list.stdout.contains("bob@example.com"))
                #expect(!list.stdout.contains(password))

                let promoted = try await run(["set-role", "--email", "bob@example.com", "--app-key", appKey, "--role", "admin"])
                #expect(promoted.status == 0 && promoted.stdout == "bob@example.com is now admin in app \(appKey)\n", "\(promoted.stderr)")

                // Bad input: one line on standard error, exit status 1, nothing changed.
                for (arguments, input, message) in [
                    (["create", "--email", "not an email", "--app-key", appKey, "--role", "viewer"], "", "an email is an address"),
                    (["create", "--email", "cy@example.com", "--app-key", appKey, "--role", "owner"], "", "a role is viewer, sender or admin"),
                    (["create", "--email", "cy@example.com", "--app-key", appKey, "--role", "viewer"], String(repeating: "p", count: 10 * 1024), "a password is 12 to 1024 bytes"),
                    (["create", "--email", "cy@example.com", "--app-key", appKey, "--role", "viewer"], "short\n", "a password is 12 to 1024 bytes"),
                    (["create", "--email", "cy@example.com", "--app-key", RandomToken.make(), "--role", "viewer"], "", "no such app"),
                    (["set-role", "--email", "cy@example.com", "--app-key", appKey, "--role", "viewer"], "", "has no role in app"),
                    (["remove", "--email", "cy@example.com"], "", "there is no account cy@example.com"),
                ] {
                    let refused = try await run(arguments, input: input)
                    #expect(refused.status == 1 && refused.stdout.isEmpty, "\(arguments) \(refused.stdout)")
                    #expect(refused.stderr.hasPrefix("blimp: ") && refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
                }
                #expect(try await accounts.signIn(email: try EmailAddress("cy@example.com"), serverKey: serverKey) == nil)

                let fromApp = try await run(["remove", "--email", "ann@example.com", "--app-key", appKey])
                #expect(fromApp.status == 0 && fromApp.stdout == "removed ann@example.com from app \(appKey)\n", "\(fromApp.stderr)")
                let whole = try await run(["remove", "--email", "bob@example.com"])
                #expect(whole.status == 0 && whole.stdout == "deleted the account bob@example.com\n", "\(whole.stderr)")
                #expect(try await accounts.list(appKey: appKey).isEmpty)

                let trail = try await AuditLog(client: client, logger: TestDatabase.logger)
                    .list(.deployment, filter: AuditFilter(kind: .commandLine), limit: 50)
                let actions = trail.records.filter { $0.entry.subject?.hasSuffix("@example.com") == true }.map(\.entry.action)
                #expect(actions.sorted { $0.rawValue < $1.rawValue } == [.accountCreated, .accountCreated, .accountRemoved, .accountRemoved, .accountRoleChanged])
            }
        }
    }
}
