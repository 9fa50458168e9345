import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// One app, for the deployment admin and the app's admins: replace its APNs key, rotate its master secret (which signs out the app's
/// console sessions), rotate its app secret with an overlap during which installed apps keep working, and issue and
/// revoke server API tokens, and set how long the app's pushes, outcomes and audit entries are kept. A new secret or
/// token is shown once, on the page that answers the form.
struct AppPage: Sendable {
    let gate: ConsoleGate
    let apps: AppStore
    /// The deployment's retentions, which the app keeps unless it has its own.
    let retention: RetentionPolicy
    let serverKey: ServerKey
    let renderer: PageRenderer

    /// The longest overlap the form accepts for an app secret.
    static let maximumOverlapHours = 90 * 24

    struct View: Sendable {
        struct Token: Sendable { let name: String, created: String }
        struct Secret: Sendable { let what: String, value: String }
        /// One retention: what applies, whether it is the app's own, and the form field holding the app's own.
        struct Retention: Sendable { let setting: String, label: String, effective: String, own: String, isOwn: Bool }

        let name: String
        let appKey: String
        let bundleID: String
        let keyID: String
        let teamID: String
        let environment: String
        let production: Bool
        let created: String
        let consoleLink: String
        let action: String
        let tokens: [Token]
        let hasTokens: Bool
        let retentions: [Retention]
        let secret: Secret?
        let notice: String?
        let error: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("apps/:key") { request, context in try await self.show(request, context) }
        router.post("apps/:key/:action") { request, context in try await self.change(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context, needs: .admin, key: "key")
        return try await self.page(scope.user, scope.app)
    }

    private func change(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context, needs: .admin, key: "key")
        let user = scope.user
        let form = try await self.gate.form(request, of: user)
        var app = scope.app
        let origin = scope.origin
        do {
            switch context.parameters.get("action") {
            case "key":
                let key = try APNsSigningKey(pem: form.raw("p8") ?? "", keyID: form["key_id"] ?? "", teamID: form["team_id"] ?? "")
                let environment = APNsEnvironment(rawValue: form["environment"] ?? "") ?? app.apnsEnvironment
                _ = try await self.apps.replaceAPNsKey(appKey: app.appKey, signingKey: key, environment: environment, serverKey: self.serverKey, by: origin)
                app = try await self.gate.app(keyed: context.parameters.get("key"))
                return try await self.page(user, app, notice: "The APNs key is replaced; workers use it within a minute.")
            case "master":
                let secret = try await self.apps.rotateMasterSecret(appKey: app.appKey, by: origin)
                return try await self.page(
                    user, app, secret: View.Secret(what: "New master secret (the old one no longer works)", value: secret))
            case "app-secret":
                guard let hours = Int(form["overlap_hours"] ?? "0"), (0...Self.maximumOverlapHours).contains(hours) else {
                    return try await self.page(user, app, error: "The overlap is a whole number of hours from 0 to \(Self.maximumOverlapHours).")
                }
                let secret = try await self.apps.rotateAppSecret(appKey: app.appKey, overlap: TimeInterval(hours * 3600), serverKey: self.serverKey, by: origin)
                return try await self.page(
                    user, app, secret: View.Secret(what: "New app secret (the old one works for \(hours) more hours)", value: secret))
            case "token":
                guard let name = form["token_name"], (1...128).contains(name.count) else {
                    return try await self.page(user, app, error: "A token's name is 1 to 128 characters.")
                }
                let token = try await self.apps.createToken(appKey: app.appKey, name: name, by: origin)
                return try await self.page(user, app, secret: View.Secret(what: "New API token \(name)", value: token))
            case "retention":
                var changes: [RetentionPolicy.Setting: Duration?] = [:]
                for setting in RetentionPolicy.Setting.allCases {
                    let text = (form["retention_\(setting.rawValue)"] ?? "").trimmingCharacters(in: .whitespaces)
                    do {
                        changes[setting] = text.isEmpty ? .some(nil) : try RetentionPolicy.parse(text, for: setting)
                    } catch {
                        return try await self.page(user, app, error: AppsPage.sentence("\(error)"))
                    }
                }
                try await self.apps.setRetention(changes, appKey: app.appKey, by: origin)
                return try await self.page(user, app, notice: "Retention is set; the janitor applies it within a minute.")
            case "revoke":
                let revoked = try await self.apps.revokeToken(appKey: app.appKey, name: form["token_name"] ?? "", by: origin)
                return try await self.page(user, app, notice: revoked ? "The token is revoked." : "There was no such token.")
            default:
                throw ConsoleError.notFound
            }
        } catch let error as StoreError where ConsoleError.isRefusal(error) {
            return try await self.page(user, app, error: AppsPage.sentence(error.description))
        } catch let error as ConsoleError {
            throw error
        } catch let error as StoreError {
            throw ConsoleError.from(error)
        } catch {
            return try await self.page(user, app, error: AppsPage.sentence("\(error)"))
        }
    }

    private func page(
        _ user: SignedIn, _ app: App, secret: View.Secret? = nil, notice: String? = nil, error: String? = nil
    ) async throws -> Response {
        let tokens: [APITokenInfo]
        let own: AppRetention
        do {
            tokens = try await self.apps.tokens(appKey: app.appKey)
            own = try await self.apps.retention(appID: app.id)
        } catch {
            throw ConsoleError.unavailable
        }
        let labels: [RetentionPolicy.Setting: String] = [
            .pushes: "Pushes and their reports, from when they finished", .outcomes: "Delivery outcomes and send tallies",
            .audit: "Audit entries", .events: "Events of the event stream",
        ]
        let retentions = RetentionPolicy.Setting.allCases.map { setting in
            View.Retention(
                setting: setting.rawValue, label: labels[setting] ?? setting.rawValue,
                effective: RetentionPolicy.format(own[setting] ?? self.retention[setting]),
                own: own[setting].map(RetentionPolicy.format) ?? "", isOwn: own[setting] != nil)
        }
        let view = View(
            name: app.name, appKey: app.appKey, bundleID: app.bundleID, keyID: app.apnsKeyID, teamID: app.apnsTeamID,
            environment: app.apnsEnvironment.rawValue, production: app.apnsEnvironment == .production, created: Format.time(app.createdAt),
            consoleLink: "/console/app/\(app.appKey)", action: "/console/apps/\(app.appKey)",
            tokens: tokens.map { View.Token(name: $0.name, created: Format.time($0.createdAt)) }, hasTokens: !tokens.isEmpty,
            retentions: retentions,
            secret: secret, notice: notice, error: error)
        let status: HTTPResponse.Status = error == nil ? .ok : .badRequest
        return self.renderer.page("app", title: app.name, nav: Navigation(user: user, app: nil, appName: nil, .apps), view, status: status)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>{{name}}</h1>
        {{#secret}}<section id="new-secret" class="card secret" role="status"><h2>{{what}}</h2>
          <p>Copy it now: it is not shown again.</p><p class="mono" id="new-secret-value">{{value}}</p></section>{{/secret}}
        {{#notice}}<p id="notice" class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#error}}<p id="error" class="alert" role="alert">{{error}}</p>{{/error}}
        <section class="card">
          <dl class="facts">
            <div><dt>App key</dt><dd class="mono">{{appKey}}</dd></div>
            <div><dt>Bundle id</dt><dd class="mono">{{bundleID}}</dd></div>
            <div><dt>APNs key id</dt><dd class="mono">{{keyID}}</dd></div>
            <div><dt>Team id</dt><dd class="mono">{{teamID}}</dd></div>
            <div><dt>APNs environment</dt><dd>{{environment}}</dd></div>
            <div><dt>Created</dt><dd>{{created}}</dd></div>
          </dl>
          <p><a href="{{consoleLink}}">Open the app's console</a> · <a id="broadcast-channels-link" href="{{consoleLink}}/broadcast-channels">Broadcast channels</a> · <a id="schedules-link" href="{{consoleLink}}/schedules">Schedules</a> · <a id="live-activity-types-link" href="{{consoleLink}}/live-activity-types">Live Activity types</a></p>
        </section>
        <section class="card">
          <h2>Server API tokens</h2>
          {{#hasTokens}}<div class="scroll"><table id="token-list"><thead><tr><th scope="col">Name</th><th scope="col">Issued</th><th scope="col"></th></tr></thead>
          <tbody>{{#tokens}}<tr><td>{{name}}</td><td>{{created}}</td><td>
            <form class="revoke-token" method="post" action="{{action}}/revoke"><input type="hidden" name="csrf" value="{{nav.csrf}}">
              <input type="hidden" name="token_name" value="{{name}}"><button type="submit" class="danger small">Revoke</button></form></td></tr>{{/tokens}}</tbody></table></div>{{/hasTokens}}
          {{^hasTokens}}<p class="muted">No tokens.</p>{{/hasTokens}}
          <form id="create-token" method="post" action="{{action}}/token" class="row">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            <div class="field grow"><label for="token_name">Token name</label><input id="token_name" name="token_name" required maxlength="128"></div>
            <button type="submit">Issue a token</button>
          </form>
        </section>
        <section class="card">
          <h2>Retention</h2>
          <dl class="facts" id="retention">{{#retentions}}
            <div><dt>{{label}}</dt><dd id="retention-{{setting}}">{{effective}} {{#isOwn}}(this app's){{/isOwn}}{{^isOwn}}(the deployment's){{/isOwn}}</dd></div>{{/retentions}}
          </dl>
          <form id="set-retention" method="post" action="{{action}}/retention" class="row">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            {{#retentions}}<div class="field"><label for="retention_{{setting}}">{{label}}</label>
              <input id="retention_{{setting}}" name="retention_{{setting}}" value="{{own}}" placeholder="the deployment's" spellcheck="false"></div>{{/retentions}}
            <button type="submit">Set retention</button>
          </form>
          <p class="muted">A whole number and a unit: 90s, 15m, 12h or 30d; pushes at least 24h, outcomes at least 1h. Empty: the deployment's. The janitor deletes what is older at its next round.</p>
        </section>
        <section class="card">
          <h2>Replace the APNs key</h2>
          <form id="replace-key" method="post" action="{{action}}/key">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            <div class="row">
              <div class="field"><label for="key_id">APNs key id</label><input id="key_id" name="key_id" required maxlength="10" spellcheck="false"></div>
              <div class="field"><label for="team_id">Team id</label><input id="team_id" name="team_id" value="{{teamID}}" required maxlength="10" spellcheck="false"></div>
              <div class="field"><label for="environment">APNs environment</label>
                <select id="environment" name="environment"><option value="sandbox">sandbox</option><option value="production" {{#production}}selected{{/production}}>production</option></select></div>
            </div>
            <div class="field"><label for="p8-file">APNs key file (.p8)</label><input id="p8-file" type="file" accept=".p8" data-fills="p8"></div>
            <div class="field"><label for="p8">or paste the key</label><textarea id="p8" name="p8" rows="5" required spellcheck="false"></textarea></div>
            <button type="submit">Replace the key</button>
          </form>
        </section>
        <section class="card">
          <h2>Rotate secrets</h2>
          <form id="rotate-app-secret" method="post" action="{{action}}/app-secret" class="row">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            <div class="field"><label for="overlap_hours">Keep the old app secret working for (hours)</label>
              <input id="overlap_hours" name="overlap_hours" type="number" min="0" max="2160" value="168" required></div>
            <button type="submit">Rotate the app secret</button>
          </form>
          <p class="muted">The app secret ships inside every installed app: keep the old one working until most users have the update.</p>
          <form id="rotate-master" method="post" action="{{action}}/master">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            <button type="submit" class="danger">Rotate the master secret</button>
          </form>
          <p class="muted">The old master secret stops working at once (other API replicas may accept it for up to 30 seconds), and the app's console sessions end.</p>
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
