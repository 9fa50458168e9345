import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The audit trail, newest first, 50 a page: an app's at `/console/app/<key>/audit`, and the whole deployment's
/// (every app's and the deployment-level entries) for the deployment admin at `/console/audit`. Filtered by person
/// (an email or a token's name), kind of actor, action and time, as `GET /api/audit` is.
struct AuditPage: Sendable {
    let gate: ConsoleGate
    let audit: AuditLog
    let apps: AppStore
    let renderer: PageRenderer

    static let pageSize = 50

    struct View: Sendable {
        struct Row: Sendable {
            let when: String
            let app: String?
            let who: String
            let kind: String
            let address: String
            let action: String
            let subject: String
            let details: String
        }

        let scopeName: String
        let showsApp: Bool
        let entries: [Row]
        let hasRows: Bool
        let nextPage: String?
        let person: String
        let kinds: [SelectOption]
        let actions: [SelectOption]
        let since: String
        let until: String
        let error: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("app/:app/audit") { request, context in
            let scope = try await self.gate.scope(request, context, needs: .admin)
            return try await self.show(
                request, .app(scope.app.id), base: "/console/app/\(scope.app.appKey)/audit", name: scope.app.name,
                nav: Navigation(scope, .audit))
        }
        router.get("audit") { request, _ in
            let user = try await self.gate.admin(request)
            return try await self.show(
                request, .deployment, base: "/console/audit", name: "every app", nav: Navigation(user: user, app: nil, appName: nil, .audit))
        }
    }

    private func show(_ request: Request, _ scope: AuditLog.Scope, base: String, name: String, nav: Navigation) async throws -> Response {
        let query = try FormFields(query: request)
        let fields = ["person", "kind", "action", "since", "until"]
        let given = fields.compactMap { field in query[field].map { (field, $0) } }
        let text = Dictionary(given, uniquingKeysWith: { first, _ in first })
        func view(_ rows: [View.Row], next: String?, error: String?) -> View {
            View(
                scopeName: name, showsApp: scope == .deployment, entries: rows, hasRows: !rows.isEmpty, nextPage: next,
                person: text["person"] ?? "",
                kinds: [SelectOption(value: "", label: "Anyone", selected: text["kind"] == nil)]
                    + AuditActor.Kind.allCases.map { SelectOption(value: $0.rawValue, label: Self.words($0), selected: text["kind"] == $0.rawValue) },
                actions: [SelectOption(value: "", label: "Any action", selected: text["action"] == nil)]
                    + AuditAction.allCases.map { SelectOption(value: $0.rawValue, label: $0.rawValue, selected: text["action"] == $0.rawValue) },
                since: text["since"] ?? "", until: text["until"] ?? "", error: error)
        }
        let filter: AuditFilter
        do {
            filter = try AuditFilter.parse(
                actor: text["person"], kind: text["kind"], action: text["action"], since: text["since"].map(Self.utc),
                until: text["until"].map(Self.utc))
        } catch {
            return self.renderer.page("audit", title: "Audit", nav: nav, view([], next: nil, error: error.message), status: .badRequest)
        }
        let start = query["start"].flatMap { Int64($0) }
        let page: AuditLog.Page
        let appNames: [Int64: String]
        do {
            page = try await self.audit.list(scope, filter: filter, limit: Self.pageSize, start: start)
            appNames = scope == .deployment ? Dictionary(try await self.apps.list().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a }) : [:]
        } catch { throw ConsoleError.from(error) }
        let rows = page.records.map { Self.row($0, appNames: appNames) }
        let next = page.next.map { id in
            "\(base)?" + (given + [("start", String(id))]).map { "\($0.0)=\(Paths.queryValue($0.1))" }.joined(separator: "&")
        }
        return self.renderer.page("audit", title: "Audit", nav: nav, view(rows, next: next, error: nil))
    }

    /// A form's `datetime-local` value (`2026-11-26T20:00`, read as UTC) with its seconds; any other text as given.
    private static func utc(_ text: String) -> String {
        text.utf8.count == 16 ? text + ":00" : text
    }

    static func row(_ record: AuditRecord, appNames: [Int64: String]) -> View.Row {
        let entry = record.entry
        let who: String =
            switch entry.actor {
            case .account(_, let email), .claimedEmail(let email): email
            case .apiToken(let id, let name): "\(name) (\(id.lowercaseString.prefix(8)))"
            case .masterSecret, .adminToken, .commandLine: Self.words(entry.actor.kind)
            }
        return View.Row(
            when: Format.time(record.at), app: entry.appID.map { appNames[$0] ?? "app \($0)" } ?? "deployment", who: who,
            kind: Self.words(entry.actor.kind), address: entry.address ?? "", action: entry.action.rawValue, subject: entry.subject ?? "",
            details: entry.details?.text ?? "")
    }

    /// A kind of actor in words.
    static func words(_ kind: AuditActor.Kind) -> String {
        switch kind {
        case .account: "Account"
        case .apiToken: "API token"
        case .masterSecret: "Master secret"
        case .adminToken: "Admin token"
        case .commandLine: "Command line"
        case .claimedEmail: "Email tried"
        }
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Audit: {{scopeName}}</h1>
        <form id="audit-filter" class="filters" method="get">
          <label>Person <input type="text" name="person" value="{{person}}" placeholder="email or token name" maxlength="256"></label>
          <label>Kind <select name="kind">{{#kinds}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/kinds}}</select></label>
          <label>Action <select name="action">{{#actions}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/actions}}</select></label>
          <label>Since (UTC) <input type="datetime-local" name="since" value="{{since}}"></label>
          <label>Until (UTC) <input type="datetime-local" name="until" value="{{until}}"></label>
          <button type="submit" class="secondary">Filter</button>
        </form>
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        {{#hasRows}}
        <div class="scroll"><table id="audit-list">
        <thead><tr><th scope="col">When</th>{{#showsApp}}<th scope="col">App</th>{{/showsApp}}<th scope="col">Who</th><th scope="col">Kind</th>
          <th scope="col">Address</th><th scope="col">Action</th><th scope="col">Subject</th><th scope="col">Details</th></tr></thead>
        <tbody>{{#entries}}<tr><td>{{when}}</td>{{#showsApp}}<td>{{app}}</td>{{/showsApp}}<td>{{who}}</td><td>{{kind}}</td>
          <td class="mono">{{address}}</td><td class="mono">{{action}}</td><td class="mono">{{subject}}</td><td class="mono">{{details}}</td></tr>{{/entries}}</tbody>
        </table></div>
        {{#nextPage}}<p><a id="next-page" href="{{nextPage}}">Older entries</a></p>{{/nextPage}}
        {{/hasRows}}
        {{^hasRows}}{{^error}}<p class="muted">Nothing on record.</p>{{/error}}{{/hasRows}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
