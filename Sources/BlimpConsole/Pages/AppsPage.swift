import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The deployment admin's apps: every app, and a form that creates one from its bundle id and `.p8` key. The new app's
/// credentials are shown once, on the page that answers the form; only their digests are kept.
struct AppsPage: Sendable {
    let gate: ConsoleGate
    let apps: AppStore
    let serverKey: ServerKey
    let renderer: PageRenderer

    struct View: Sendable {
        struct Row: Sendable { let name: String, link: String, consoleLink: String, bundleID: String, environment: String, created: String }
        struct Credentials: Sendable { let name: String, appKey: String, appSecret: String, masterSecret: String, link: String }
        struct Draft: Sendable { let name: String, bundleID: String, keyID: String, teamID: String, production: Bool }

        let apps: [Row]
        let hasApps: Bool
        let created: Credentials?
        let error: String?
        let draft: Draft
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("apps") { request, _ in try await self.show(request) }
        router.post("apps") { request, context in try await self.create(request, context) }
    }

    private func show(_ request: Request) async throws -> Response {
        let user = try await self.gate.admin(request)
        return try await self.page(user, created: nil, error: nil, draft: View.Draft(name: "", bundleID: "", keyID: "", teamID: "", production: false))
    }

    private func create(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let user = try await self.gate.admin(request)
        let form = try await self.gate.form(request, of: user)
        let draft = View.Draft(
            name: form["name"] ?? "", bundleID: form["bundle_id"] ?? "", keyID: form["key_id"] ?? "", teamID: form["team_id"] ?? "",
            production: form["environment"] == "production")
        let credentials = AppCredentials.issue()
        let app: App
        do {
            let key = try APNsSigningKey(pem: form.raw("p8") ?? "", keyID: draft.keyID, teamID: draft.teamID)
            let newApp = try NewApp(name: draft.name, bundleID: draft.bundleID, signingKey: key, environment: draft.production ? .production : .sandbox)
            app = try await self.apps.create(
                newApp, credentials: credentials, serverKey: self.serverKey, by: self.gate.origin(of: user, request, context))
        } catch let error as StoreError where ConsoleError.isRefusal(error) {
            return try await self.page(user, created: nil, error: Self.sentence(error.description), draft: draft, status: .conflict)
        } catch let error as StoreError {
            throw ConsoleError.from(error)
        } catch {
            return try await self.page(user, created: nil, error: Self.sentence("\(error)"), draft: draft, status: .badRequest)
        }
        let shown = View.Credentials(
            name: app.name, appKey: credentials.appKey, appSecret: credentials.appSecret, masterSecret: credentials.masterSecret,
            link: "/console/apps/\(app.appKey)")
        return try await self.page(user, created: shown, error: nil, draft: View.Draft(name: "", bundleID: "", keyID: "", teamID: "", production: false))
    }

    private func page(
        _ user: SignedIn, created: View.Credentials?, error: String?, draft: View.Draft, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let apps: [App]
        do { apps = try await self.apps.list() } catch { throw ConsoleError.unavailable }
        let rows = apps.map {
            View.Row(
                name: $0.name, link: "/console/apps/\($0.appKey)", consoleLink: "/console/app/\($0.appKey)", bundleID: $0.bundleID,
                environment: $0.apnsEnvironment.rawValue, created: Format.time($0.createdAt))
        }
        let view = View(apps: rows, hasApps: !rows.isEmpty, created: created, error: error, draft: draft)
        return self.renderer.page("apps", title: "Apps", nav: Navigation(user: user, app: nil, appName: nil, .apps), view, status: status)
    }

    /// An error description as a sentence: capitalised, with a full stop.
    static func sentence(_ text: String) -> String {
        (text.prefix(1).uppercased() + text.dropFirst()) + (text.hasSuffix(".") ? "" : ".")
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Apps</h1>
        {{#created}}
        <section id="new-credentials" class="card secret" role="status">
          <h2>{{name}} is ready</h2>
          <p>Copy these now: Blimp keeps only their digests and will not show them again.</p>
          <dl class="facts">
            <div><dt>App key</dt><dd class="mono" id="new-app-key">{{appKey}}</dd></div>
            <div><dt>App secret (goes in the app)</dt><dd class="mono" id="new-app-secret">{{appSecret}}</dd></div>
            <div><dt>Master secret (servers and this console only)</dt><dd class="mono" id="new-master-secret">{{masterSecret}}</dd></div>
          </dl>
          <p><a href="{{link}}">Manage {{name}}</a></p>
        </section>
        {{/created}}
        {{#hasApps}}
        <div class="scroll"><table id="app-list">
          <thead><tr><th scope="col">Name</th><th scope="col">Bundle id</th><th scope="col">APNs</th><th scope="col">Created</th><th scope="col">Console</th></tr></thead>
          <tbody>{{#apps}}<tr><td><a class="app-link" href="{{link}}">{{name}}</a></td><td class="mono">{{bundleID}}</td><td>{{environment}}</td>
            <td>{{created}}</td><td><a href="{{consoleLink}}">Open</a></td></tr>{{/apps}}</tbody>
        </table></div>
        {{/hasApps}}
        {{^hasApps}}<p class="muted">No apps yet.</p>{{/hasApps}}
        <section class="card">
          <h2>Create an app</h2>
          {{#error}}<p id="error-create" class="field-error" role="alert">{{error}}</p>{{/error}}
          <form id="create-app" method="post" action="/console/apps">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            {{#draft}}
            <div class="row">
              <div class="field grow"><label for="app-name">Name</label><input id="app-name" name="name" value="{{name}}" required></div>
              <div class="field grow"><label for="bundle_id">Bundle id</label><input id="bundle_id" name="bundle_id" value="{{bundleID}}" required spellcheck="false" placeholder="com.example.app"></div>
            </div>
            <div class="row">
              <div class="field"><label for="key_id">APNs key id</label><input id="key_id" name="key_id" value="{{keyID}}" required spellcheck="false" maxlength="10"></div>
              <div class="field"><label for="team_id">Team id</label><input id="team_id" name="team_id" value="{{teamID}}" required spellcheck="false" maxlength="10"></div>
              <div class="field"><label for="environment">APNs environment</label>
                <select id="environment" name="environment"><option value="sandbox">sandbox</option><option value="production" {{#production}}selected{{/production}}>production</option></select></div>
            </div>
            {{/draft}}
            <div class="field"><label for="p8-file">APNs key file (.p8)</label><input id="p8-file" type="file" accept=".p8" data-fills="p8"></div>
            <div class="field"><label for="p8">or paste the key</label>
              <textarea id="p8" name="p8" rows="6" spellcheck="false" placeholder="-----BEGIN PRIVATE KEY-----" required></textarea></div>
            <button type="submit">Create the app</button>
          </form>
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
