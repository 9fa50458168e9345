import BlimpCore
import BlimpTestSupport
import Foundation
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct AccountStoreTests {
    let serverKey = ServerKey.generate().key
    static let origin = AuditOrigin(actor: .commandLine, address: nil)
    static let cheapHash: @Sendable () async -> PasswordHash = {
        PasswordHash(password: "a password of some length", parameters: .init(logRounds: 10, blockSize: 8, parallelism: 1))
    }

    @Test func rolesAreGivenListedAndAccountsFoundForSignIn() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let accounts = AccountStore(client: client, logger: TestDatabase.logger)
            let (one, _) = try await TestApps.create(named: "One", in: client, serverKey: self.serverKey)
            let (two, _) = try await TestApps.create(named: "Two", in: client, serverKey: self.serverKey)
            let ann = try EmailAddress("Ann@Example.com")
            let first = try await accounts.add(email: ann, appKey: one.appKey, role: .viewer, by: Self.origin, passwordHash: Self.cheapHash)
            let second = try await accounts.add(
                email: try EmailAddress("ann@example.com"), appKey: two.appKey, role: .admin, by: Self.origin, passwordHash: Self.cheapHash)
            #expect(first.created && !second.created && first.accountID == second.accountID)
            await #expect(throws: StoreError.invalid("ann@example.com already has a role in this app")) {
                try await accounts.add(email: ann, appKey: one.appKey, role: .sender, by: Self.origin, passwordHash: Self.cheapHash)
            }
            await #expect(throws: StoreError.noSuchApp) {
                try await accounts.add(email: ann, appKey: RandomToken.make(), role: .sender, by: Self.origin, passwordHash: Self.cheapHash)
            }
            #expect(try await accounts.list().map { [$0.email, $0.role?.rawValue ?? ""] }.count == 2)
            #expect(try await accounts.list(appKey: two.appKey).map(\.role) == [.admin])
            #expect(try await accounts.roles(accountID: first.accountID) == [one.id: .viewer, two.id: .admin])
            let found = try #require(try await accounts.signIn(email: ann, serverKey: self.serverKey))
            #expect(found.passwordHash?.verify("a password of some length") == true && found.totp == nil)
            #expect(try await accounts.signIn(email: try EmailAddress("bob@example.com"), serverKey: self.serverKey) == nil)
        }
    }

    /// A change of role and a removal delete the person's sessions in the same transaction; other people's stay.
    @Test func roleChangesAndRemovalsEndSessions() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let accounts = AccountStore(client: client, logger: TestDatabase.logger)
            let sessions = ConsoleSessions(client: client, logger: TestDatabase.logger)
            let (app, _) = try await TestApps.create(named: "One", in: client, serverKey: self.serverKey)
            let ann = try EmailAddress("ann@example.com")
            let bob = try EmailAddress("bob@example.com")
            let annID = try await accounts.add(email: ann, appKey: app.appKey, role: .sender, by: Self.origin, passwordHash: Self.cheapHash).accountID
            let bobID = try await accounts.add(email: bob, appKey: app.appKey, role: .sender, by: Self.origin, passwordHash: Self.cheapHash).accountID
            let now = Date()
            func signIn(_ id: Int64, _ email: EmailAddress) async throws -> String {
                try await sessions.start(.account(id: id, email: email.value), now: now).token
            }
            func isOpen(_ token: String) async throws -> Bool { try await sessions.find(token: token, now: now, adminToken: nil) != nil }

            let annSession = try await signIn(annID, ann)
            let bobSession = try await signIn(bobID, bob)
            #expect(try await sessions.find(token: annSession, now: now, adminToken: nil)?.account?.email == "ann@example.com")
            #expect(try await accounts.setRole(email: ann, appKey: app.appKey, role: .viewer, by: Self.origin))
            #expect(try await !isOpen(annSession))
            #expect(try await isOpen(bobSession))
            #expect(try await accounts.role(accountID: annID, appID: app.id) == .viewer)

            let again = try await signIn(annID, ann)
            #expect(try await accounts.remove(email: ann, appKey: app.appKey, by: Self.origin))
            #expect(try await !isOpen(again))
            #expect(try await isOpen(bobSession))
            #expect(try await accounts.role(accountID: annID, appID: app.id) == nil)
            #expect(try await !accounts.remove(email: ann, appKey: app.appKey, by: Self.origin))

            #expect(try await accounts.remove(email: bob, by: Self.origin))
            #expect(try await !isOpen(bobSession))
            #expect(try await accounts.signIn(email: bob, serverKey: self.serverKey) == nil)
            let logged = try await AuditLog(client: client, logger: TestDatabase.logger).list(.deployment, filter: AuditFilter(), limit: 50)
            let actions: [AuditAction] = logged.records.map(\.entry.action)
            #expect(actions.filter { $0 == .accountRemoved }.count == 2)
            #expect(actions.filter { $0 == .accountRoleChanged }.count == 1)
        }
    }

    /// An admin session counts only with the admin token it signed in with.
    @Test func rotatingTheAdminTokenEndsAdminSessions() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let sessions = ConsoleSessions(client: client, logger: TestDatabase.logger)
            let now = Date()
            let token = try await sessions.start(.admin(SecretDigest(of: "old admin token")), now: now).token
            #expect(try await sessions.find(token: token, now: now, adminToken: SecretDigest(of: "old admin token"))?.isAdmin == true)
            #expect(try await sessions.find(token: token, now: now, adminToken: SecretDigest(of: "new admin token")) == nil)
            #expect(try await sessions.find(token: token, now: now, adminToken: nil) == nil)
        }
    }

    /// A TOTP step is accepted once, however many callers race for it.
    @Test func aTOTPStepIsAcceptedOnce() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let accounts = AccountStore(client: client, logger: TestDatabase.logger)
            let (app, _) = try await TestApps.create(named: "One", in: client, serverKey: self.serverKey)
            let ann = try EmailAddress("ann@example.com")
            let id = try await accounts.add(email: ann, appKey: app.appKey, role: .viewer, by: Self.origin, passwordHash: Self.cheapHash).accountID
            let totp = TOTP.generate()
            try await accounts.enrollTOTP(accountID: id, email: ann, totp, serverKey: self.serverKey, by: Self.origin)
            #expect(try await accounts.signIn(email: ann, serverKey: self.serverKey)?.totp == nil)  // not confirmed yet
            #expect(try await accounts.pendingTOTP(accountID: id, email: ann, serverKey: self.serverKey) == totp)
            #expect(try await accounts.confirmTOTP(accountID: id, email: ann, step: 100, by: Self.origin))
            let found = try #require(try await accounts.signIn(email: ann, serverKey: self.serverKey))
            #expect(found.totp == totp && found.lastStep == 100)

            let accepted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await accounts.acceptTOTPStep(accountID: id, step: 101) } }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(accepted == 1)
            #expect(try await !accounts.acceptTOTPStep(accountID: id, step: 100))
            #expect(try await accounts.acceptTOTPStep(accountID: id, step: 102))
            try await accounts.disableTOTP(accountID: id, email: ann, by: Self.origin)
            #expect(try await accounts.signIn(email: ann, serverKey: self.serverKey)?.totp == nil)
        }
    }
}
