import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// Signing in and out. An app signs in with its key and master secret, the deployment admin with its token; either
/// gets a session in PostgreSQL and an HttpOnly, SameSite=Strict cookie naming it. The sign-in form carries a token
/// matched by a short-lived cookie (no session exists yet to hold one), and attempts are limited per client address.
struct LoginController: Sendable {
    let gate: ConsoleGate
    let apps: AppStore
    let serverKey: ServerKey
    let adminToken: String?
    let attempts: RateLimiter<String>
    let clientAddress: @Sendable (Request, any RequestContext) -> String
    let renderer: PageRenderer

    static let loginCookie = "blimp_login"

    struct View: Sendable {
        let csrf: String
        let error: String?
        let adminEnabled: Bool
        let appKey: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("login") { request, _ in try await self.form(request) }
        router.post("login") { request, context in try await self.login(request, from: self.clientAddress(request, context)) }
        router.post("logout") { request, _ in try await self.logout(request) }
        router.get { request, _ in try await self.home(request) }
    }

    /// The signed-in person's first page.
    private func home(_ request: Request) async throws -> Response {
        let user = try await self.gate.signedIn(request)
        guard let appID = user.session.appID else { return PageRenderer.redirect(to: "/console/apps") }
        let app: App?
        do { app = try await self.apps.list().first { $0.id == appID } } catch { throw ConsoleError.unavailable }
        guard let app else { throw ConsoleError.signIn }
        return PageRenderer.redirect(to: "/console/app/\(app.appKey)")
    }

    private func form(_ request: Request, error: String? = nil, appKey: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        if error == nil, let user = try? await self.gate.signedIn(request) {
            return PageRenderer.redirect(to: user.session.isAdmin ? "/console/apps" : "/console")
        }
        let token = RandomToken.make()
        let view = View(csrf: token, error: error, adminEnabled: self.adminToken != nil, appKey: appKey)
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
        if self.attempts.admit(address) != nil {
            return try await self.form(
                request, error: "Too many sign-in attempts from your address. Wait a minute and try again.",
                appKey: form["app_key"], status: .tooManyRequests)
        }
        let appID: Int64?
        let home: String
        if let token = form["admin_token"] {
            guard let adminToken = self.adminToken, SecretDigest(of: adminToken).matches(token) else {
                return try await self.form(request, error: "That admin token is not right.", status: .unauthorized)
            }
            (appID, home) = (nil, "/console/apps")
        } else {
            guard let appKey = form["app_key"], let secret = form["master_secret"], RandomToken.isWellFormed(appKey),
                let credentials = try await self.credentials(appKey), credentials.role(of: secret, at: self.gate.now()) == .master
            else {
                return try await self.form(
                    request, error: "The app key and master secret do not match.", appKey: form["app_key"], status: .unauthorized)
            }
            (appID, home) = (credentials.app.id, "/console/app/\(credentials.app.appKey)")
        }
        let started: (token: String, session: ConsoleSession)
        do { started = try await self.gate.sessions.start(appID: appID, now: self.gate.now()) } catch { throw ConsoleError.from(error) }
        var response = PageRenderer.redirect(to: home)
        response.setCookie(self.gate.cookie(for: started.token, session: started.session))
        response.setCookie(self.gate.expired(Self.loginCookie))
        return response
    }

    private func credentials(_ appKey: String) async throws -> StoredCredentials? {
        do { return try await self.apps.credentials(appKey: appKey, serverKey: self.serverKey) } catch { throw ConsoleError.unavailable }
    }

    private func logout(_ request: Request) async throws -> Response {
        let user = try await self.gate.signedIn(request)
        _ = try await self.gate.form(request, of: user)
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
          <form id="app-login" method="post" action="/console/login">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label for="app_key">App key</label>
            <input id="app_key" name="app_key" value="{{appKey}}" autocomplete="username" required spellcheck="false">
            <label for="master_secret">Master secret</label>
            <input id="master_secret" name="master_secret" type="password" autocomplete="current-password" required>
            <button id="app-login-button" type="submit">Sign in to the app</button>
          </form>
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
