import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// A person's own account: change their password, and turn on (with a code from their authenticator, to show it
/// works) or off a TOTP second factor. Only for accounts' sessions.
struct AccountPage: Sendable {
    let gate: ConsoleGate
    let accounts: AccountStore
    let serverKey: ServerKey
    let renderer: PageRenderer

    /// The issuer authenticator apps show beside the account.
    static let issuer = "Blimp"

    struct View: Sendable {
        struct Enrollment: Sendable { let secret: String, uri: String }

        let email: String
        let totp: Bool
        let enrollment: Enrollment?
        let notice: String?
        let error: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("account") { request, _ in try await self.show(request) }
        router.post("account/:action") { request, context in try await self.change(request, context) }
    }

    private func show(_ request: Request) async throws -> Response {
        let (user, account) = try await self.account(request)
        return try await self.page(user, account)
    }

    private func change(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let (user, account) = try await self.account(request)
        let form = try await self.gate.form(request, of: user)
        let email = try EmailAddress(account.email)
        let origin = self.gate.origin(of: user, request, context)
        do {
            switch context.parameters.get("action") {
            case "password":
                let found = try await self.accounts.signIn(email: email, serverKey: self.serverKey)
                guard await PasswordHasher.verify(form.raw("current") ?? "", against: found?.passwordHash) else {
                    return try await self.page(user, account, error: "The current password is not right.")
                }
                let new = try Password.checked(form.raw("new") ?? "")
                try await self.accounts.setPassword(accountID: account.id, email: email, await PasswordHasher.hash(new), by: origin)
                return try await self.page(user, account, notice: "Your password is changed.")
            case "totp-enroll":
                try await self.accounts.enrollTOTP(accountID: account.id, email: email, TOTP.generate(), serverKey: self.serverKey, by: origin)
                return try await self.page(user, account)
            case "totp-confirm":
                guard let totp = try await self.accounts.pendingTOTP(accountID: account.id, email: email, serverKey: self.serverKey),
                    let step = totp.acceptedStep(for: form["code"] ?? "", at: self.gate.now(), after: nil),
                    try await self.accounts.confirmTOTP(accountID: account.id, email: email, step: step, by: origin)
                else { return try await self.page(user, account, error: "That code is not right. Try the next one your app shows.") }
                return try await self.page(user, account, notice: "Your authenticator is on: sign-in now asks for its code.")
            case "totp-disable":
                try await self.accounts.disableTOTP(accountID: account.id, email: email, by: origin)
                return try await self.page(user, account, notice: "Your authenticator is off.")
            default:
                throw ConsoleError.notFound
            }
        } catch let error as AccountRuleError {
            return try await self.page(user, account, error: AppsPage.sentence(error.description))
        } catch let error as StoreError {
            throw ConsoleError.from(error)
        }
    }

    private func account(_ request: Request) async throws -> (SignedIn, (id: Int64, email: String)) {
        let user = try await self.gate.signedIn(request)
        guard let account = user.session.account else { throw ConsoleError.notFound }
        return (user, account)
    }

    private func page(_ user: SignedIn, _ account: (id: Int64, email: String), notice: String? = nil, error: String? = nil) async throws -> Response {
        let email = try EmailAddress(account.email)
        let found: AccountSignIn?
        let pending: TOTP?
        do {
            found = try await self.accounts.signIn(email: email, serverKey: self.serverKey)
            pending = try await self.accounts.pendingTOTP(accountID: account.id, email: email, serverKey: self.serverKey)
        } catch { throw ConsoleError.from(error) }
        let view = View(
            email: account.email, totp: found?.totp != nil,
            enrollment: pending.map { View.Enrollment(secret: $0.base32Secret, uri: $0.uri(account: account.email, issuer: Self.issuer)) },
            notice: notice, error: error)
        return self.renderer.page(
            "account", title: "Your account", nav: Navigation(user: user, app: nil, appName: nil, .account), view,
            status: error == nil ? .ok : .badRequest)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Your account</h1>
        <p class="mono" id="account-email">{{email}}</p>
        {{#notice}}<p id="notice" class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#error}}<p id="error" class="alert" role="alert">{{error}}</p>{{/error}}
        <section class="card">
          <h2>Password</h2>
          <form id="change-password" method="post" action="/console/account/password">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            <label for="current">Current password</label>
            <input id="current" name="current" type="password" autocomplete="current-password" required>
            <label for="new">New password (12 to 1,024 bytes)</label>
            <input id="new" name="new" type="password" autocomplete="new-password" minlength="12" required>
            <button type="submit">Change the password</button>
          </form>
        </section>
        <section class="card">
          <h2>Authenticator (TOTP)</h2>
          {{#totp}}<p>On: sign-in asks for a code from your authenticator app.</p>
          <form id="totp-disable" method="post" action="/console/account/totp-disable"><input type="hidden" name="csrf" value="{{nav.csrf}}">
            <button type="submit" class="danger">Turn it off</button></form>{{/totp}}
          {{^totp}}
          {{#enrollment}}
          <p>Add this account to your authenticator app with the key or the link, then enter the code it shows.</p>
          <p>Key: <span class="mono" id="totp-secret">{{secret}}</span></p>
          <p><a class="mono" id="totp-uri" href="{{uri}}">{{uri}}</a></p>
          <form id="totp-confirm" method="post" action="/console/account/totp-confirm"><input type="hidden" name="csrf" value="{{nav.csrf}}">
            <label for="code">Code</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required>
            <button type="submit">Turn it on</button></form>
          {{/enrollment}}
          {{^enrollment}}<p>Off.</p>{{/enrollment}}
          <form id="totp-enroll" method="post" action="/console/account/totp-enroll"><input type="hidden" name="csrf" value="{{nav.csrf}}">
            <button type="submit" class="secondary">{{#enrollment}}Start again with a new key{{/enrollment}}{{^enrollment}}Set up an authenticator{{/enrollment}}</button></form>
          {{/totp}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
