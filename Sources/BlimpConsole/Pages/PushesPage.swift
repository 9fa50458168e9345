import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The app's recent pushes, newest first, with their state and counts.
struct PushesPage: Sendable {
    let gate: ConsoleGate
    let reports: PushReports
    let renderer: PageRenderer

    static let pageSize = 50

    struct View: Sendable {
        struct Row: Sendable {
            let link: String
            let shortID: String
            let what: String
            let name: String?
            let nameLink: String?
            let state: String
            let targets: String
            let sent: String
            let failed: String
            let age: String
        }

        let pushes: [Row]
        let hasRows: Bool
        let nextPage: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("pushes") { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let start = try FormFields(query: request)["start"].flatMap { UUID(parsing: $0) }
        let page: (reports: [PushReport], next: UUID?)
        do { page = try await self.reports.list(appID: scope.app.id, limit: Self.pageSize, start: start) } catch {
            throw ConsoleError.from(error)
        }
        let base = "/console/app/\(scope.app.appKey)"
        let now = self.gate.now()
        let rows = page.reports.map { Self.row($0, base: base, now: now) }
        let view = View(pushes: rows, hasRows: !rows.isEmpty, nextPage: page.next.map { "\(base)/pushes?start=\($0.lowercaseString)" })
        return self.renderer.page("pushes", title: "Pushes", nav: Navigation(scope, .pushes), view)
    }

    static func row(_ report: PushReport, base: String, now: Date) -> View.Row {
        let id = report.pushID.lowercaseString
        return View.Row(
            link: "\(base)/pushes/\(id)", shortID: String(id.prefix(8)), what: report.event?.rawValue ?? report.kind.rawValue, name: report.name,
            nameLink: report.name.map { "\(base)/activities/\(Paths.encode($0))" }, state: report.state.rawValue,
            targets: Format.count(report.counts.targets), sent: Format.count(report.counts.sent),
            failed: Format.count(report.counts.failed.values.reduce(0, +)), age: Format.age(report.acceptedAt, now: now) + " ago")
    }

    /// The rows of a table of pushes, shared by this page and a name's timeline.
    static let rowsTemplate = #"""
        <thead><tr><th scope="col">Push</th><th scope="col">Event</th><th scope="col">Name</th><th scope="col">State</th>
          <th scope="col" class="num">Targets</th><th scope="col" class="num">Sent</th><th scope="col" class="num">Failed</th><th scope="col">Accepted</th></tr></thead>
        <tbody>{{#pushes}}<tr><td><a class="push-link mono" href="{{link}}">{{shortID}}</a></td><td>{{what}}</td>
          <td>{{#nameLink}}<a href="{{nameLink}}">{{name}}</a>{{/nameLink}}</td><td><span class="state state-{{state}}">{{state}}</span></td>
          <td class="num">{{targets}}</td><td class="num">{{sent}}</td><td class="num">{{failed}}</td><td>{{age}}</td></tr>{{/pushes}}</tbody>
        """#

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Pushes</h1>
        {{#hasRows}}
        <div class="scroll"><table id="push-list">{{> push-rows}}</table></div>
        {{#nextPage}}<p><a id="next-page" href="{{nextPage}}">Older pushes</a></p>{{/nextPage}}
        {{/hasRows}}
        {{^hasRows}}<p class="muted">No pushes yet. <a href="compose">Compose one</a>.</p>{{/hasRows}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
