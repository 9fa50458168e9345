import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// A signed-in person: their session, and the cookie's token that names it.
struct SignedIn: Sendable {
    let session: ConsoleSession
    let token: String
}

/// The app a page is about, with whoever is looking at it, their role in it (an account's role; admin for the app's
/// master secret and the deployment admin), and who they are in the audit trail.
struct AppScope: Sendable {
    let user: SignedIn
    let app: App
    let role: ConsoleRole
    let origin: AuditOrigin
}

/// Admits console requests: finds the session behind the cookie, scopes app pages to the apps the session may see
/// with the role it holds there, and checks every form's CSRF token.
struct ConsoleGate: Sendable {
    let sessions: ConsoleSessions
    let apps: AppStore
    let accounts: AccountStore
    /// The digest of `BLIMP_ADMIN_TOKEN`, which admin sessions must have signed in with; `nil` when admin sign-in is off.
    let adminToken: SecretDigest?
    let secureCookies: Bool
    /// The client's address, as the API reads it (`BLIMP_CLIENT_ADDRESS_HEADER`), for the audit trail.
    let clientAddress: @Sendable (Request, any RequestContext) -> String
    let now: @Sendable () -> Date

    static let sessionCookie = "blimp_session"

    /// The signed-in person, or ``ConsoleError/signIn``.
    func signedIn(_ request: Request) async throws -> SignedIn {
        guard let token = request.cookies[Self.sessionCookie]?.value, token.utf8.count == 2 * RandomToken.length else {
            throw ConsoleError.signIn
        }
        let session: ConsoleSession?
        do { session = try await self.sessions.find(token: token, now: self.now(), adminToken: self.adminToken) } catch {
            throw ConsoleError.from(error)
        }
        guard let session else { throw ConsoleError.signIn }
        return SignedIn(session: session, token: token)
    }

    /// The deployment admin, or ``ConsoleError/notFound`` for an app's session.
    func admin(_ request: Request) async throws -> SignedIn {
        let user = try await self.signedIn(request)
        guard user.session.isAdmin else { throw ConsoleError.notFound }
        return user
    }

    /// The app named by the path's `key` parameter (`app` by default), which the session must hold at least `needs`
    /// in: an app it may not see at all is ``ConsoleError/notFound``, a role too low ``ConsoleError/forbidden(_:)``.
    func scope(
        _ request: Request, _ context: some RequestContext, needs: ConsoleRole = .viewer, key: String = "app"
    ) async throws -> AppScope {
        let user = try await self.signedIn(request)
        let app = try await self.app(keyed: context.parameters.get(key))
        guard let role = try await self.role(of: user.session, in: app) else { throw ConsoleError.notFound }
        guard role >= needs else { throw ConsoleError.forbidden(needs) }
        return AppScope(user: user, app: app, role: role, origin: self.origin(of: user, request, context))
    }

    /// The session's role in `app`: admin for the deployment admin and the app's own master secret, an account's
    /// role from `account_roles`, `nil` for none.
    func role(of session: ConsoleSession, in app: App) async throws -> ConsoleRole? {
        if session.isAdmin || session.appID == app.id { return .admin }
        guard let account = session.account else { return nil }
        do { return try await self.accounts.role(accountID: account.id, appID: app.id) } catch { throw ConsoleError.from(error) }
    }

    /// Who `user` is in the audit trail, and the client's address.
    func origin(of user: SignedIn, _ request: Request, _ context: some RequestContext) -> AuditOrigin {
        AuditOrigin(actor: user.session.actor, address: self.clientAddress(request, context))
    }

    /// The app with the app key a path names, or ``ConsoleError/notFound``.
    func app(keyed key: String?) async throws -> App {
        guard let key, RandomToken.isWellFormed(key) else { throw ConsoleError.notFound }
        let app: App?
        do { app = try await self.apps.find(appKey: key) } catch { throw ConsoleError.unavailable }
        guard let app else { throw ConsoleError.notFound }
        return app
    }

    /// The form's fields, once its CSRF token is the session's.
    func form(_ request: Request, of user: SignedIn) async throws -> FormFields {
        let form = try await FormFields(body: request)
        guard let token = form["csrf"], ConstantTime.equal(Array(token.utf8), Array(user.session.csrfToken.utf8)) else {
            throw ConsoleError.staleForm
        }
        return form
    }

    /// The cookie that carries a new session's token.
    func cookie(for token: String, session: ConsoleSession) -> Cookie {
        Cookie(
            name: Self.sessionCookie, value: token, expires: session.expiresAt, path: "/console", secure: self.secureCookies,
            httpOnly: true, sameSite: .strict)
    }

    /// A cookie that makes the browser forget `name`.
    func expired(_ name: String) -> Cookie {
        Cookie(name: name, value: "", maxAge: 0, path: "/console", secure: self.secureCookies, httpOnly: true, sameSite: .strict)
    }
}
