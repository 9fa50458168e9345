import BlimpCLI
import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import BlimpAPI

extension ConsoleTests {
    /// Gives `email` `role` in `app` with `password` (cheap scrypt parameters, to keep tests fast: the stored ones are used).
    static func addAccount(
        _ harness: APIHarness, _ email: String, _ app: App, _ role: ConsoleRole, password: String = "a password for tests"
    ) async throws {
        _ = try await AccountStore(client: harness.database, logger: TestDatabase.logger).add(
            email: try EmailAddress(email), appKey: app.appKey, role: role, by: .commandLine
        ) { PasswordHash(password: password, parameters: .init(logRounds: 10, blockSize: 8, parallelism: 1)) }
    }

    static func signIn(_ client: any TestClientProtocol, email: String, password: String = "a password for tests", code: String = "") async throws
        -> (page: Page, session: String?)
    {
        try await Self.signIn(client, [("email", email), ("password", password), ("totp", code)])
    }

    /// A viewer reads every page but cannot compose, send, cancel or manage; a sender sends; neither sees another app.
    @Test func rolesDecideWhatAPersonMayDo() async throws {
        try await APIHarness.run { harness, client in
            try await Self.addAccount(harness, "viewer@example.com", harness.scores.app, .viewer)
            try await Self.addAccount(harness, "sender@example.com", harness.scores.app, .sender)
            let base = "/console/app/\(harness.scores.app.appKey)"

            let viewer = try #require(try await Self.signIn(client, email: "Viewer@Example.com").session)
            #expect(try await Self.get(client, "/console", cookie: viewer).headers[.location] == base)
            for page in ["", "/channels", "/activities", "/pushes", "/schedules"] {
                let shown = try await Self.get(client, base + page, cookie: viewer)
                #expect(shown.status == .ok, "\(page)")
                #expect(!shown.text.contains("id=\"nav-compose\"") && !shown.text.contains("id=\"nav-people\""))
            }
            let overview = try await Self.get(client, base, cookie: viewer)
            #expect(overview.text.contains("viewer@example.com"))
            let csrf = try #require(overview.csrf)
            let compose = try await Self.get(client, "\(base)/compose", cookie: viewer)
            #expect(compose.status == .forbidden && compose.text.contains("sender role"))
            let send = [("csrf", csrf), ("event", "update"), ("name", "match"), ("content_state", #"{"home": 1}"#), ("action", "send")]
            #expect(try await Self.post(client, "\(base)/compose", cookie: viewer, send).status == .forbidden)
            #expect(try await Self.get(client, "\(base)/people", cookie: viewer).status == .forbidden)
            #expect(try await Self.get(client, "/console/apps/\(harness.scores.app.appKey)", cookie: viewer).status == .forbidden)
            #expect(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)", cookie: viewer).status == .notFound)
            #expect(try await Self.get(client, "/console/apps", cookie: viewer).status == .notFound)

            let sender = try #require(try await Self.signIn(client, email: "sender@example.com").session)
            let senderCSRF = try #require(try await Self.get(client, "\(base)/compose", cookie: sender).csrf)
            let sent = try await Self.post(
                client, "\(base)/compose", cookie: sender, [("csrf", senderCSRF)] + send.dropFirst())
            #expect(sent.status == .seeOther)
            let pushID = try #require(sent.headers[.location]?.split(separator: "/").last.map(String.init))
            #expect(try await Self.post(client, "\(base)/pushes/\(pushID)/cancel", cookie: viewer, [("csrf", csrf)]).status == .forbidden)
            #expect(try await Self.get(client, "\(base)/people", cookie: sender).status == .forbidden)
            let audit = try await AuditLog(client: harness.database, logger: TestDatabase.logger)
                .list(.app(harness.scores.app.id), filter: AuditFilter(action: .pushAccepted), limit: 10)
            #expect(audit.records.map(\.entry.actor.label) == ["sender@example.com"])
        }
    }

    /// An app's admin adds people (a new account's password shown once), changes roles and removes people; a removed
    /// person's open session is refused at its next request, and a changed role ends the session too.
    @Test func adminsManageThePeopleOfTheirApp() async throws {
        try await APIHarness.run { harness, client in
            try await Self.addAccount(harness, "admin@example.com", harness.scores.app, .admin)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let admin = try #require(try await Self.signIn(client, email: "admin@example.com").session)
            let people = try await Self.get(client, "\(base)/people", cookie: admin)
            #expect(people.status == .ok && people.text.contains("admin@example.com"))
            let csrf = try #require(people.csrf)
            #expect(try await Self.get(client, "/console/apps/\(harness.scores.app.appKey)", cookie: admin).status == .ok)
            #expect(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/people", cookie: admin).status == .notFound)

            let added = try await Self.post(client, "\(base)/people/add", cookie: admin, [("csrf", csrf), ("email", "Ann@Example.com"), ("role", "viewer")])
            #expect(added.status == .ok)
            let password = try #require(Self.secret(in: added.text))
            let ann = try #require(try await Self.signIn(client, email: "ann@example.com", password: password).session)
            #expect(try await Self.get(client, base, cookie: ann).status == .ok)

            let promoted = try await Self.post(client, "\(base)/people/role", cookie: admin, [("csrf", csrf), ("email", "ann@example.com"), ("role", "sender")])
            #expect(promoted.status == .ok && promoted.text.contains("now sender"))
            #expect(try await Self.get(client, base, cookie: ann).headers[.location] == "/console/login")
            let again = try #require(try await Self.signIn(client, email: "ann@example.com", password: password).session)
            #expect(try await Self.get(client, "\(base)/compose", cookie: again).status == .ok)

            let removed = try await Self.post(client, "\(base)/people/remove", cookie: admin, [("csrf", csrf), ("email", "ann@example.com")])
            #expect(removed.status == .ok && removed.text.contains("removed"))
            #expect(try await Self.get(client, base, cookie: again).headers[.location] == "/console/login")

            // Bad input is a page that says so, never a 5xx.
            for fields in [
                [("email", "not an email"), ("role", "viewer")], [("email", "bob@example.com"), ("role", "owner")],
                [("email", String(repeating: "a", count: 10_000)), ("role", "admin")],
            ] {
                let answer = try await Self.post(client, "\(base)/people/add", cookie: admin, [("csrf", csrf)] + fields)
                #expect(answer.status == .badRequest, "\(fields)")
                #expect(answer.text.contains("id=\"error\""))
            }
            let twice = try await Self.post(client, "\(base)/people/add", cookie: admin, [("csrf", csrf), ("email", "admin@example.com"), ("role", "viewer")])
            #expect(twice.status == .badRequest)
            let trail = try await AuditLog(client: harness.database, logger: TestDatabase.logger)
                .list(.app(harness.scores.app.id), filter: AuditFilter(label: "admin@example.com"), limit: 20)
            #expect(Set(trail.records.map(\.entry.action)) == [.accountCreated, .accountRoleChanged, .accountRemoved])
        }
    }

    /// Wrong passwords, unknown and malformed emails, 10 KB passwords and wrong or replayed TOTP codes are all the
    /// same 401; the submitted email is locked out after the burst whether or not it has an account.
    @Test func signInRefusesBadInputAlikeAndTOTPCodesOnce() async throws {
        try await APIHarness.run { harness, client in
            try await Self.addAccount(harness, "ann@example.com", harness.scores.app, .viewer)
            for (email, password) in [
                ("ann@example.com", "not the password"), ("nobody@example.com", "a password for tests"), ("not an email", "x"),
                ("ann@example.com", String(repeating: "p", count: 10 * 1024)), (String(repeating: "e", count: 5000), "y"),
            ] {
                let answer = try await Self.signIn(client, email: email, password: password)
                #expect(answer.page.status == .unauthorized && answer.session == nil)
                #expect(answer.page.text.contains("The email, password and code do not match."))
            }

            let accounts = AccountStore(client: harness.database, logger: TestDatabase.logger)
            let email = try EmailAddress("ann@example.com")
            let found = try #require(try await accounts.signIn(email: email, serverKey: harness.serverKey))
            let totp = TOTP.generate()
            try await accounts.enrollTOTP(accountID: found.accountID, email: email, totp, serverKey: harness.serverKey, by: .commandLine)
            let step = TOTP.timeStep(at: harness.clock.now)
            #expect(try await accounts.confirmTOTP(accountID: found.accountID, email: email, step: step - 1, by: .commandLine))
            #expect(try await Self.signIn(client, email: "ann@example.com").page.status == .unauthorized)
            #expect(try await Self.signIn(client, email: "ann@example.com", code: "000000x").page.status == .unauthorized)
            let code = totp.code(step: step)
            #expect(try await Self.signIn(client, email: "ann@example.com", code: code).session != nil)
            let replayed = try await Self.signIn(client, email: "ann@example.com", code: code)
            #expect(replayed.page.status == .unauthorized && replayed.session == nil)

            let failed = try await AuditLog(client: harness.database, logger: TestDatabase.logger)
                .list(.deployment, filter: AuditFilter(action: .signInFailed), limit: 50)
            #expect(failed.records.count >= 7)
            #expect(failed.records.contains { $0.entry.actor == .claimedEmail("ann@example.com") })
            #expect(!failed.records.contains { "\($0.entry)".contains("not the password") || "\($0.entry)".contains(code) })
        }
    }

    /// With `BLIMP_CONSOLE_MASTER_SECRET_SIGN_IN=off`, the master secret no longer signs in (its form is gone too).
    @Test func masterSecretSignInCanBeSwitchedOff() async throws {
        try await APIHarness.run(masterSecretSignIn: false) { harness, client in
            #expect(!(try await Self.get(client, "/console/login", cookie: nil).text.contains("id=\"app-login\"")))
            let answer = try await Self.signIn(
                client, [("app_key", harness.scores.app.appKey), ("master_secret", harness.scores.credentials.masterSecret)])
            #expect(answer.page.status == .forbidden && answer.session == nil)
            try await Self.addAccount(harness, "ann@example.com", harness.scores.app, .viewer)
            #expect(try await Self.signIn(client, email: "ann@example.com").session != nil)
        }
    }

    /// A person changes their password, and turns TOTP on with a code from their authenticator.
    @Test func aPersonManagesTheirOwnAccount() async throws {
        try await APIHarness.run { harness, client in
            try await Self.addAccount(harness, "ann@example.com", harness.scores.app, .viewer)
            let session = try #require(try await Self.signIn(client, email: "ann@example.com").session)
            let page = try await Self.get(client, "/console/account", cookie: session)
            #expect(page.status == .ok)
            let csrf = try #require(page.csrf)
            let short = try await Self.post(
                client, "/console/account/password", cookie: session, [("csrf", csrf), ("current", "a password for tests"), ("new", "short")])
            #expect(short.status == .badRequest)
            let changed = try await Self.post(
                client, "/console/account/password", cookie: session,
                [("csrf", csrf), ("current", "a password for tests"), ("new", "a brand new password")])
            #expect(changed.status == .ok && changed.text.contains("changed"))
            #expect(try await Self.signIn(client, email: "ann@example.com", password: "a brand new password").session != nil)

            let enrolled = try await Self.post(client, "/console/account/totp-enroll", cookie: session, [("csrf", csrf)])
            let uri = try #require(enrolled.text.range(of: "otpauth://totp/").map { String(enrolled.text[$0.lowerBound...].prefix { $0 != "\"" }) })
            let secret = try #require(uri.split(separator: "secret=").last?.prefix { $0 != "&" })
            let totp = try #require(TOTP(base32Secret: String(secret)))
            let wrong = try await Self.post(client, "/console/account/totp-confirm", cookie: session, [("csrf", csrf), ("code", "12345x")])
            #expect(wrong.status == .badRequest)
            let code = totp.code(step: TOTP.timeStep(at: harness.clock.now))
            let on = try await Self.post(client, "/console/account/totp-confirm", cookie: session, [("csrf", csrf), ("code", code)])
            #expect(on.status == .ok && on.text.contains("is on"))
            #expect(try await Self.signIn(client, email: "ann@example.com", password: "a brand new password").session == nil)
        }
    }

    /// A replica started with a new `BLIMP_ADMIN_TOKEN` refuses sessions signed in with the old one; other sessions
    /// go on.
    @Test func rotatingTheAdminTokenEndsAdminSessions() async throws {
        try await APIHarness.run(adminToken: Self.adminToken) { harness, client in
            let admin = try #require(try await Self.signIn(client, [("admin_token", Self.adminToken)]).session)
            let app = try await Self.signIn(client, harness.scores)
            #expect(try await Self.get(client, "/console/apps", cookie: admin).status == .ok)
            let configuration = APIConfiguration(
                serverKey: harness.serverKey, publicURL: APIHarness.publicURL, limits: APIHarness.limits, now: { harness.clock.now })
            let rotated = Application(
                router: BlimpServer.buildRouter(
                    database: harness.database, configuration: configuration, adminToken: "a-new-admin-token-0123456789",
                    logger: TestDatabase.logger))
            try await rotated.test(.router) { replica in
                #expect(try await Self.get(replica, "/console/apps", cookie: admin).headers[.location] == "/console/login")
                #expect(try await Self.get(replica, "/console/app/\(harness.scores.app.appKey)", cookie: app).status == .ok)
                let signedIn = try await Self.signIn(replica, [("admin_token", "a-new-admin-token-0123456789")])
                #expect(signedIn.session != nil)
            }
        }
    }
}

extension ConsoleTests {
    /// A sign-in whose email PostgreSQL could not store (a NUL byte) is a 400 before any check, limit or record, and
    /// the person's next sign-in works.
    @Test func aSignInWithANulInTheEmailIsABadRequest() async throws {
        try await APIHarness.run { harness, client in
            try await Self.addAccount(harness, "someone@example.com", harness.scores.app, .viewer)
            let hostile = try await Self.signIn(client, email: "someone\u{0}@example.com")
            #expect(hostile.page.status == .badRequest && hostile.page.text.contains("NUL"))
            #expect(hostile.session == nil)
            #expect(try await Self.signIn(client, email: "someone@example.com").session != nil)
        }
    }
}
