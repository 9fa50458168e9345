import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// Every Live Activity name in use: how many channels track it (active, ended, expired) and its last push.
struct ActivitiesPage: Sendable {
    let gate: ConsoleGate
    let console: ConsoleStore
    let renderer: PageRenderer

    static let pageSize = 100

    struct View: Sendable {
        struct Row: Sendable {
            let name: String
            let link: String
            let active: String
            let ended: String
            let expired: String
            let lastPush: LastPush?
        }
        struct LastPush: Sendable { let link: String, event: String, state: String, age: String }

        let rows: [Row]
        let hasRows: Bool
        let nextPage: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("activities") { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let after = try FormFields(query: request).raw("after")
        let names: [ActivityNameSummary]
        do {
            _ = try await self.console.rollup(appID: scope.app.id, now: self.gate.now()) // counts a new app's names once
            names = try await self.console.activityNames(appID: scope.app.id, after: after, limit: Self.pageSize)
        } catch { throw ConsoleError.from(error) }
        let base = "/console/app/\(scope.app.appKey)"
        let now = self.gate.now()
        let rows = names.map { Self.row($0, base: base, now: now) }
        let next = names.count == Self.pageSize ? names.last.map { "\(base)/activities?after=\(Paths.encode($0.name))" } : nil
        let view = View(rows: rows, hasRows: !rows.isEmpty, nextPage: next)
        return self.renderer.page("activities", title: "Live Activities", nav: Navigation(scope, .activities), view)
    }

    static func row(_ summary: ActivityNameSummary, base: String, now: Date) -> View.Row {
        func count(_ value: Int?) -> String { value.map(Format.count) ?? "–" }
        let last = summary.lastPushID.map { id in
            View.LastPush(
                link: "\(base)/pushes/\(id.lowercaseString)", event: summary.lastPushEvent?.rawValue ?? "",
                state: summary.lastPushState?.rawValue ?? "", age: summary.lastPushAt.map { Format.age($0, now: now) + " ago" } ?? "")
        }
        return View.Row(
            name: summary.name, link: "\(base)/activities/\(Paths.encode(summary.name))", active: count(summary.active),
            ended: count(summary.ended), expired: count(summary.expired), lastPush: last)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Live Activities</h1>
        <p class="muted">Channels tracking each name, counted once a minute. Expired: started over 8 hours ago, so iOS has ended it.
          Names backed by an iOS 18 broadcast channel: <a id="broadcast-channels-link" href="{{nav.base}}/broadcast-channels">Broadcast channels</a>.
          What the activities look like: <a id="live-activity-types-link" href="{{nav.base}}/live-activity-types">Live Activity types</a>.</p>
        {{#hasRows}}
        <div class="scroll"><table id="activity-names">
          <thead><tr><th scope="col">Name</th><th scope="col" class="num">Active</th><th scope="col" class="num">Ended</th>
            <th scope="col" class="num">Expired</th><th scope="col">Last push</th></tr></thead>
          <tbody>{{#rows}}<tr><td><a class="activity-link" href="{{link}}">{{name}}</a></td><td class="num">{{active}}</td>
            <td class="num">{{ended}}</td><td class="num">{{expired}}</td>
            <td>{{#lastPush}}<a href="{{link}}">{{event}}</a> <span class="state state-{{state}}">{{state}}</span> {{age}}{{/lastPush}}</td></tr>{{/rows}}</tbody>
        </table></div>
        {{#nextPage}}<p><a id="next-page" href="{{nextPage}}">Next page</a></p>{{/nextPage}}
        {{/hasRows}}
        {{^hasRows}}<p class="muted">No Live Activity names yet: none tracked by a device, none pushed to.</p>{{/hasRows}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
