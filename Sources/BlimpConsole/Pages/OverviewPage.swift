import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// An app at a glance: channels, active Live Activities by name, the last day's pushes by state, the queue, and the
/// last hour's sends per minute.
struct OverviewPage: Sendable {
    let gate: ConsoleGate
    let console: ConsoleStore
    let renderer: PageRenderer

    struct View: Sendable {
        struct Name: Sendable { let name: String, link: String, active: String }
        struct State: Sendable { let state: String, count: String }

        let channels: String
        let optedIn: String
        let countedAgo: String
        let names: [Name]
        let hasNames: Bool
        let states: [State]
        let queued: String
        let oldestQueuedAge: String?
        let chart: String
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let now = self.gate.now()
        let overview: AppOverview
        do { overview = try await self.console.overview(appID: scope.app.id, now: now) } catch { throw ConsoleError.from(error) }
        let base = "/console/app/\(scope.app.appKey)"
        let view = View(
            channels: Format.count(overview.rollup.channels),
            optedIn: Format.count(overview.rollup.optedIn),
            countedAgo: Format.age(overview.rollup.computedAt, now: now),
            names: overview.activeByName.map {
                View.Name(name: $0.name, link: "\(base)/activities/\(Paths.encode($0.name))", active: Format.count($0.active))
            },
            hasNames: !overview.activeByName.isEmpty,
            states: PushState.allCases.map { View.State(state: $0.rawValue, count: Format.count(overview.pushesByState[$0] ?? 0)) },
            queued: Format.count(overview.queued),
            oldestQueuedAge: overview.oldestQueuedAt.map { Format.age($0, now: now) },
            chart: SendsChart.svg(overview.sendsByMinute, now: now))
        return self.renderer.page("overview", title: scope.app.name, nav: Navigation(scope, .overview), view)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Overview</h1>
        <div id="overview" class="tiles">
          <section class="tile"><h2>Channels</h2><p class="big" id="channel-count">{{channels}}</p>
            <p class="muted">{{optedIn}} opted in to alerts · counted {{countedAgo}} ago</p></section>
          <section class="tile"><h2>Queue</h2><p class="big" id="queue-depth">{{queued}}</p>
            <p class="muted">{{#oldestQueuedAge}}oldest waiting {{oldestQueuedAge}}{{/oldestQueuedAge}}{{^oldestQueuedAge}}nothing waiting{{/oldestQueuedAge}}</p></section>
          <section class="tile"><h2>Pushes, last 24 h</h2>
            <dl class="states">{{#states}}<div><dt>{{state}}</dt><dd>{{count}}</dd></div>{{/states}}</dl></section>
        </div>
        <section class="card">
          <h2>APNs sends per minute</h2>
          {{{chart}}}
          <p class="legend"><span class="key bar-delivered"></span>delivered <span class="key bar-refused"></span>refused
            <span class="key bar-failed"></span>failed or no answer</p>
        </section>
        <section class="card">
          <h2>Live Activities active by name</h2>
          {{#hasNames}}
          <div class="scroll"><table id="active-names"><thead><tr><th scope="col">Name</th><th scope="col" class="num">Active</th></tr></thead>
          <tbody>{{#names}}<tr><td><a class="activity-link" href="{{link}}">{{name}}</a></td><td class="num">{{active}}</td></tr>{{/names}}</tbody></table></div>
          {{/hasNames}}
          {{^hasNames}}<p class="muted">No channel tracks an active Live Activity.</p>{{/hasNames}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
