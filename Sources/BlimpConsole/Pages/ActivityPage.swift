import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// One Live Activity name: its counts and its timeline of pushes with their outcomes.
struct ActivityPage: Sendable {
    let gate: ConsoleGate
    let console: ConsoleStore
    let reports: PushReports
    let renderer: PageRenderer

    static let timelineLength = 100

    struct View: Sendable {
        let name: String
        let counts: ActivitiesPage.View.Row
        let composeLink: String
        let pushes: [PushesPage.View.Row]
        let hasPushes: Bool
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("activities/:name") { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        guard let name = context.parameters.get("name").flatMap(Paths.decode) else { throw ConsoleError.notFound }
        let summary: ActivityNameSummary
        let timeline: [PushReport]
        do {
            summary = try await self.console.activityName(name, appID: scope.app.id)
            timeline = try await self.reports.timeline(name: name, appID: scope.app.id, limit: Self.timelineLength)
        } catch { throw ConsoleError.from(error) }
        let base = "/console/app/\(scope.app.appKey)"
        let now = self.gate.now()
        let pushes = timeline.map { PushesPage.row($0, base: base, now: now) }
        let view = View(
            name: name, counts: ActivitiesPage.row(summary, base: base, now: now),
            composeLink: "\(base)/compose?name=\(Paths.encode(name))", pushes: pushes, hasPushes: !pushes.isEmpty)
        return self.renderer.page("activity", title: name, nav: Navigation(scope, .activities), view)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Live Activity <q>{{name}}</q></h1>
        {{#counts}}
        <div class="tiles">
          <section class="tile"><h2>Active</h2><p class="big">{{active}}</p></section>
          <section class="tile"><h2>Ended</h2><p class="big">{{ended}}</p></section>
          <section class="tile"><h2>Expired</h2><p class="big">{{expired}}</p></section>
        </div>
        {{/counts}}
        <p><a class="button" href="{{composeLink}}">Push to this name</a></p>
        <section class="card">
          <h2>Pushes, newest first</h2>
          {{#hasPushes}}<div class="scroll"><table id="activity-pushes">{{> push-rows}}</table></div>{{/hasPushes}}
          {{^hasPushes}}<p class="muted">No push has gone to this name.</p>{{/hasPushes}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
