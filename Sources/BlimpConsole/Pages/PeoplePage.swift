import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The people of one app, for its admins and the deployment admin: each person's email, role and second factor; add
/// a person (a new account gets a generated password, shown once, which they change on their account page), change a
/// role, remove a person from the app. A change of role or a removal ends the person's sessions at once.
struct PeoplePage: Sendable {
    let gate: ConsoleGate
    let accounts: AccountStore
    let renderer: PageRenderer

    struct View: Sendable {
        struct Person: Sendable {
            let email: String
            let role: String
            let roles: [Choice]
            let totp: Bool
        }

        struct Choice: Sendable { let value: String, selected: Bool }
        struct Secret: Sendable { let email: String, value: String }

        let action: String
        /// The app's credentials and API tokens page, which its admins may open too.
        let credentialsLink: String
        let people: [Person]
        let hasPeople: Bool
        let roles: [Choice]
        let password: Secret?
        let notice: String?
        let error: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("people") { request, context in try await self.show(request, context) }
        router.post("people/:action") { request, context in try await self.change(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        try await self.page(try await self.gate.scope(request, context, needs: .admin))
    }

    private func change(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context, needs: .admin)
        let form = try await self.gate.form(request, of: scope.user)
        do {
            let email = try EmailAddress(form["email"] ?? "")
            switch context.parameters.get("action") {
            case "add":
                let role = try ConsoleRole(named: form["role"] ?? "")
                let password = Password.generate()
                let added = try await self.accounts.add(email: email, appKey: scope.app.appKey, role: role, by: scope.origin) { await PasswordHasher.hash(password) }
                guard added.created else { return try await self.page(scope, notice: "\(email) can now sign in to this app as \(role.rawValue).") }
                return try await self.page(scope, password: View.Secret(email: email.value, value: password))
            case "role":
                let role = try ConsoleRole(named: form["role"] ?? "")
                let changed = try await self.accounts.setRole(email: email, appKey: scope.app.appKey, role: role, by: scope.origin)
                return try await self.page(scope, notice: changed ? "\(email) is now \(role.rawValue); their sessions have ended." : "\(email) has no role here.")
            case "remove":
                let removed = try await self.accounts.remove(email: email, appKey: scope.app.appKey, by: scope.origin)
                return try await self.page(scope, notice: removed ? "\(email) is removed from this app." : "\(email) has no role here.")
            default:
                throw ConsoleError.notFound
            }
        } catch let error as AccountRuleError {
            return try await self.page(scope, error: AppsPage.sentence(error.description))
        } catch let error as StoreError where ConsoleError.isRefusal(error) {
            return try await self.page(scope, error: AppsPage.sentence(error.description))
        } catch let error as StoreError {
            throw ConsoleError.from(error)
        }
    }

    private func page(
        _ scope: AppScope, password: View.Secret? = nil, notice: String? = nil, error: String? = nil
    ) async throws -> Response {
        let people: [AccountListing]
        do { people = try await self.accounts.list(appKey: scope.app.appKey) } catch { throw ConsoleError.from(error) }
        let view = View(
            action: "/console/app/\(scope.app.appKey)/people", credentialsLink: "/console/apps/\(scope.app.appKey)",
            people: people.map { person in
                View.Person(
                    email: person.email, role: person.role?.rawValue ?? "",
                    roles: ConsoleRole.allCases.map { View.Choice(value: $0.rawValue, selected: $0 == person.role) }, totp: person.totpEnabled)
            },
            hasPeople: !people.isEmpty, roles: ConsoleRole.allCases.map { View.Choice(value: $0.rawValue, selected: $0 == .viewer) },
            password: password, notice: notice, error: error)
        return self.renderer.page(
            "people", title: "People", nav: Navigation(scope, .people), view, status: error == nil ? .ok : .badRequest)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>People</h1>
        {{#password}}<section id="new-secret" class="card secret" role="status"><h2>Password for {{email}}</h2>
          <p>Give it to them now: it is not shown again. They can change it on their account page.</p>
          <p class="mono" id="new-secret-value">{{value}}</p></section>{{/password}}
        {{#notice}}<p id="notice" class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#error}}<p id="error" class="alert" role="alert">{{error}}</p>{{/error}}
        <p class="muted">A viewer reads every page; a sender also composes, sends, schedules and cancels; an admin also manages the
          app's credentials, API tokens and people. Changing a role or removing a person ends their sessions at once.
          The app's credentials and API tokens: <a id="app-credentials-link" href="{{credentialsLink}}">on its app page</a>.</p>
        {{#hasPeople}}
        <div class="table-wrap"><table id="people"><thead><tr><th>Email</th><th>Role</th><th>Authenticator</th><th></th></tr></thead><tbody>
        {{#people}}<tr class="person">
          <td class="mono person-email">{{email}}</td>
          <td><form class="inline set-role" method="post" action="{{action}}/role"><input type="hidden" name="csrf" value="{{nav.csrf}}">
            <input type="hidden" name="email" value="{{email}}">
            <select name="role" aria-label="Role of {{email}}">{{#roles}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/roles}}</select>
            <button type="submit" class="secondary small">Change</button></form></td>
          <td>{{#totp}}on{{/totp}}{{^totp}}off{{/totp}}</td>
          <td><form class="inline remove-person" method="post" action="{{action}}/remove"><input type="hidden" name="csrf" value="{{nav.csrf}}">
            <input type="hidden" name="email" value="{{email}}"><button type="submit" class="danger small">Remove</button></form></td>
        </tr>{{/people}}
        </tbody></table></div>
        {{/hasPeople}}
        {{^hasPeople}}<p class="muted">No one has an account in this app yet.</p>{{/hasPeople}}
        <section class="card">
          <h2>Add a person</h2>
          <form id="add-person" method="post" action="{{action}}/add">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            <label for="person-email">Email</label>
            <input id="person-email" name="email" type="email" required spellcheck="false">
            <label for="person-role">Role</label>
            <select id="person-role" name="role">{{#roles}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{value}}</option>{{/roles}}</select>
            <button id="add-person-button" type="submit">Add</button>
          </form>
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
