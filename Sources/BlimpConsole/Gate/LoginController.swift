import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// Signing in and out. A person signs in with their account's email and password (and a TOTP code once they have
/// one), an app with its key and master secret (unless switched off), the deployment admin with its token; each gets
/// a session in PostgreSQL and an HttpOnly, SameSite=Strict cookie naming it. The sign-in form carries a token matched
/// by a short-lived cookie (no session exists yet to hold one). Attempts are limited per client address and per
/// submitted email, whether or not it has an account, across the deployment's replicas (the email only once the
/// address is admitted, so a flood of emails adds no more rows to `rate_buckets` than the address's limit lets
/// through), and an unknown email costs a password hash like a known one: a locked account and an unknown email get
/// the same answer in the same time.
struct LoginController: Sendable {
    let gate: ConsoleGate
    let apps: AppStore
    let accounts: AccountStore
    let audit: AuditLog
    let serverKey: ServerKey
    let adminToken: String?
    let masterSecretSignIn: Bool
    let attempts: SharedRateLimiter
    let clientAddress: @Sendable (Request, any RequestContext) -> String
    let renderer: PageRenderer

    static let loginCookie = "blimp_login"

    struct View: Sendable {
        let csrf: String
        let error: String?
        let adminEnabled: Bool
        let masterSecretEnabled: Bool
        let appKey: String?
        let email: String?
    }

    /// What a wrong email, password or code is told, alike.
    static let wrongAccount = "The email, password and code do not match."

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("login") { request, _ in try await self.form(request) }
        router.post("login") { request, context in try await self.login(request, from: self.clientAddress(request, context)) }
        router.post("logout") { request, context in try await self.logout(request, from: self.clientAddress(request, context)) }
        router.get { request, _ in try await self.home(request) }
    }

    /// The signed-in person's first page.
    private func home(_ request: Request) async throws -> Response {
        let user = try await self.gate.signedIn(request)
        if user.session.isAdmin { return PageRenderer.redirect(to: "/console/apps") }
        let app: App?
        do {
            let apps = try await self.apps.list()
            if let account = user.session.account {
                let roles = try await self.accounts.roles(accountID: account.id)
                guard let first = apps.first(where: { roles[$0.id] != nil }) else { return PageRenderer.redirect(to: "/console/account") }
                app = first
            } else {
                app = apps.first { $0.id == user.session.appID }
            }
        } catch { throw ConsoleError.unavailable }
        guard let app else { throw ConsoleError.signIn }
        return PageRenderer.redirect(to: "/console/app/\(app.appKey)")
    }

    private func form(
        _ request: Request, error: String? = nil, appKey: String? = nil, email: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        if error == nil, let user = try? await self.gate.signedIn(request) {
            return PageRenderer.redirect(to: user.session.isAdmin ? "/console/apps" : "/console")
        }
        // A sign-in page shown again keeps the token the browser holds (another tab, or the back button), so that the
        // form already on screen still matches it.
        let token = request.cookies[Self.loginCookie].map(\.value).flatMap { RandomToken.isWellFormed($0) ? $0 : nil } ?? RandomToken.make()
        let view = View(
            csrf: token, error: error, adminEnabled: self.adminToken != nil, masterSecretEnabled: self.masterSecretSignIn, appKey: appKey,
            email: email)
        var response = self.renderer.page("login", title: "Sign in", nav: nil, view, status: status)
        response.setCookie(Cookie(
            name: Self.loginCookie, value: token, maxAge: 3600, path: "/console", secure: self.gate.secureCookies, httpOnly: true,
            sameSite: .strict))
        return response
    }

    private func login(_ request: Request, from address: String) async throws -> Response {
        let form = try await FormFields(body: request)
        guard let expected = request.cookies[Self.loginCookie]?.value, let sent = form["csrf"],
            ConstantTime.equal(Array(expected.utf8), Array(sent.utf8))
        else { throw ConsoleError.staleForm }
        let email = form["email"]
        let label = email.map(Self.label)
        let limited = [address] + (label.map { ["email " + $0] } ?? [])
        // A refusal by the limit is not recorded: it costs no check, and a row for each would let a flood of requests
        // write to PostgreSQL without bound. The attempts the limit let through are on record.
        for key in limited where await self.attempts.admit(key) != nil {
            return try await self.form(
                request, error: "Too many sign-in attempts. Wait a minute and try again.", appKey: form["app_key"], email: email,
                status: .tooManyRequests)
        }
        let who: ConsoleSignIn
        let home: String
        var appID: Int64?
        if let email {
            guard let account = try await self.account(email, password: form.raw("password") ?? "", code: form["totp"] ?? "") else {
                try await self.record(.signInFailed, by: Self.tried(form, label), from: address)
                return try await self.form(request, error: Self.wrongAccount, email: email, status: .unauthorized)
            }
            (who, home) = (.account(id: account.accountID, email: account.email), "/console")
        } else if let token = form["admin_token"] {
            guard let adminToken = self.adminToken, SecretDigest(of: adminToken).matches(token) else {
                try await self.record(.signInFailed, by: .adminToken, from: address)
                return try await self.form(request, error: "That admin token is not right.", status: .unauthorized)
            }
            (who, home) = (.admin(SecretDigest(of: adminToken)), "/console/apps")
        } else {
            guard self.masterSecretSignIn else {
                try await self.record(.signInFailed, by: .masterSecret, from: address, details: "master_secret_sign_in_off")
                return try await self.form(request, error: "Signing in with a master secret is switched off: use your account.", status: .forbidden)
            }
            guard let appKey = form["app_key"], let secret = form["master_secret"], RandomToken.isWellFormed(appKey),
                let credentials = try await self.credentials(appKey), credentials.role(of: secret, at: self.gate.now()) == .master
            else {
                try await self.record(.signInFailed, by: .masterSecret, from: address)
                return try await self.form(
                    request, error: "The app key and master secret do not match.", appKey: form["app_key"], status: .unauthorized)
            }
            (who, home, appID) = (.app(credentials.app.id), "/console/app/\(credentials.app.appKey)", credentials.app.id)
        }
        let started: (token: String, session: ConsoleSession)
        do { started = try await self.gate.sessions.start(who, now: self.gate.now()) } catch { throw ConsoleError.from(error) }
        try await self.record(.signIn, by: started.session.actor, from: address, appID: appID)
        var response = PageRenderer.redirect(to: home)
        response.setCookie(self.gate.cookie(for: started.token, session: started.session))
        response.setCookie(self.gate.expired(Self.loginCookie))
        return response
    }

    /// The submitted email as the audit trail names a refused sign-in: lower-cased, at most 250 bytes (it may be
    /// anything).
    static func label(_ email: String) -> String {
        String(decoding: email.lowercased().utf8.prefix(250), as: UTF8.self)
    }

    /// Who a refused attempt claimed to be: the submitted email, or the credential the form carried.
    private static func tried(_ form: FormFields, _ label: String?) -> AuditActor {
        if let label { return .claimedEmail(label) }
        return form["admin_token"] != nil ? .adminToken : .masterSecret
    }

    /// Records a sign-in, a refused one or a sign-out (never the password, secret, token or code).
    private func record(
        _ action: AuditAction, by actor: AuditActor, from address: String, appID: Int64? = nil, details reason: String? = nil
    ) async throws {
        let entry = AuditEntry(
            appID: appID, actor: actor, address: address, action: action, subject: actor.label,
            details: reason.map { .object([.init("reason", .string($0))]) })
        do { try await self.audit.record(entry) } catch { throw ConsoleError.from(error) }
    }

    /// The account `email` names, when `password` is its password and, with TOTP on, `code` a code not used before;
    /// `nil` otherwise. A malformed or unknown email, or a password of the wrong length, still costs one hash.
    private func account(_ email: String, password: String, code: String) async throws -> AccountSignIn? {
        var found: AccountSignIn?
        if let address = try? EmailAddress(email) {
            do { found = try await self.accounts.signIn(email: address, serverKey: self.serverKey) } catch { throw ConsoleError.from(error) }
        }
        let allowed = (try? Password.checked(password)) != nil
        guard await PasswordHasher.verify(allowed ? password : "", against: allowed ? found?.passwordHash : nil), let found else { return nil }
        if let totp = found.totp {
            guard let step = totp.acceptedStep(for: code, at: self.gate.now(), after: found.lastStep) else { return nil }
            do { guard try await self.accounts.acceptTOTPStep(accountID: found.accountID, step: step) else { return nil } } catch {
                throw ConsoleError.from(error)
            }
        }
        if let hash = found.passwordHash, hash.needsUpgrade {
            try? await self.accounts.setPassword(
                accountID: found.accountID, email: try EmailAddress(found.email), await PasswordHasher.hash(password), by: nil)
        }
        return found
    }

    private func credentials(_ appKey: String) async throws -> StoredCredentials? {
        do { return try await self.apps.credentials(appKey: appKey, serverKey: self.serverKey) } catch { throw ConsoleError.unavailable }
    }

    private func logout(_ request: Request, from address: String) async throws -> Response {
        let user = try await self.gate.signedIn(request)
        _ = try await self.gate.form(request, of: user)
        try await self.record(.signOut, by: user.session.actor, from: address, appID: user.session.appID)
        do { try await self.gate.sessions.end(token: user.token) } catch { throw ConsoleError.from(error) }
        var response = PageRenderer.redirect(to: "/console/login")
        response.setCookie(self.gate.expired(ConsoleGate.sessionCookie))
        return response
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <section class="card narrow">
          <h1>Sign in to Blimp</h1>
          {{#error}}<p id="login-error" class="alert" role="alert">{{error}}</p>{{/error}}
          <form id="account-login" method="post" action="/console/login">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label for="email">Email</label>
            <input id="email" name="email" type="email" value="{{email}}" autocomplete="username" required spellcheck="false">
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required>
            <label for="totp">Authenticator code <span class="muted">(if you turned it on)</span></label>
            <input id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*">
            <button id="account-login-button" type="submit">Sign in</button>
          </form>
          {{#masterSecretEnabled}}
          <h2>With an app's master secret</h2>
          <form id="app-login" method="post" action="/console/login">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label for="app_key">App key</label>
            <input id="app_key" name="app_key" value="{{appKey}}" autocomplete="off" required spellcheck="false">
            <label for="master_secret">Master secret</label>
            <input id="master_secret" name="master_secret" type="password" autocomplete="off" required>
            <button id="app-login-button" type="submit">Sign in to the app</button>
          </form>
          {{/masterSecretEnabled}}
          {{#adminEnabled}}
          <h2>Deployment admin</h2>
          <form id="admin-login" method="post" action="/console/login">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label for="admin_token">Admin token</label>
            <input id="admin_token" name="admin_token" type="password" autocomplete="off" required>
            <button id="admin-login-button" type="submit">Sign in as admin</button>
          </form>
          {{/adminEnabled}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}

