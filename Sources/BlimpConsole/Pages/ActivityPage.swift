import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// One Live Activity name: its activities counted by state, a page of channels with their activity's state and last
/// update, and its timeline of pushes with their outcomes.
struct ActivityPage: Sendable {
    let gate: ConsoleGate
    let channels: ChannelStore
    let reports: PushReports
    let renderer: PageRenderer

    static let timelineLength = 100
    static let channelsPerPage = 50

    struct View: Sendable {
        struct Count: Sendable { let state: String, count: String }
        struct Channel: Sendable {
            let channelID: String
            let link: String
            let state: String
            let ended: String?
            let started: String
            let lastUpdate: ChannelPage.View.LastUpdate?
        }

        let name: String
        /// Empty after the first page of channels.
        let counts: [Count]
        let hasCounts: Bool
        let channels: [Channel]
        let hasChannels: Bool
        let nextChannels: String?
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
        let start = request.uri.queryParameters["start"].flatMap { UUID(parsing: String($0)) }
        // Counting reads every activity of the name: once, on the first page, as the API does.
        let counts: [LiveActivityState: Int]?
        let page: ChannelActivityPage
        let timeline: [PushReport]
        do {
            counts = start == nil ? try await self.channels.liveActivityCounts(named: name, appID: scope.app.id) : nil
            page = try await self.channels.liveActivities(named: name, appID: scope.app.id, start: start, limit: Self.channelsPerPage)
            timeline = try await self.reports.timeline(name: name, appID: scope.app.id, limit: Self.timelineLength)
        } catch { throw ConsoleError.from(error) }
        let base = "/console/app/\(scope.app.appKey)"
        let now = self.gate.now()
        let pushes = timeline.map { PushesPage.row($0, base: base, now: now) }
        let channels = page.activities.map { entry in
            let row = ChannelPage.view(activity: entry.activity, base: base, now: now)
            return View.Channel(
                channelID: entry.channelID.lowercaseString, link: "\(base)/channels/\(entry.channelID.lowercaseString)",
                state: row.state, ended: row.ended, started: row.age, lastUpdate: row.lastUpdate)
        }
        let view = View(
            name: name,
            counts: counts.map { counts in LiveActivityState.allCases.map { View.Count(state: $0.rawValue, count: Format.count(counts[$0] ?? 0)) } } ?? [],
            hasCounts: counts != nil, channels: channels, hasChannels: !channels.isEmpty,
            nextChannels: page.next.map { "\(base)/activities/\(Paths.encode(name))?start=\($0.lowercaseString)" },
            composeLink: "\(base)/compose?name=\(Paths.encode(name))", pushes: pushes, hasPushes: !pushes.isEmpty)
        return self.renderer.page("activity", title: name, nav: Navigation(scope, .activities), view)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Live Activity <q>{{name}}</q></h1>
        {{#hasCounts}}<div class="tiles" id="activity-states">
          {{#counts}}<section class="tile"><h2 class="state state-{{state}}">{{state}}</h2><p class="big">{{count}}</p></section>{{/counts}}
        </div>{{/hasCounts}}
        {{#nav.maySend}}<p><a class="button" href="{{composeLink}}">Push to this name</a></p>{{/nav.maySend}}
        <section class="card">
          <h2>Channels, by channel id</h2>
          {{#hasChannels}}<div class="scroll"><table id="activity-channels">
            <thead><tr><th scope="col">Channel</th><th scope="col">State</th><th scope="col">Started</th><th scope="col">Last update</th></tr></thead>
            <tbody>{{#channels}}<tr><td class="mono"><a href="{{link}}">{{channelID}}</a></td>
              <td><span class="state state-{{state}}">{{state}}</span>{{#ended}} <span class="muted">{{ended}}</span>{{/ended}}</td><td>{{started}} ago</td>
              <td>{{#lastUpdate}}<a class="outcome {{#ok}}ok{{/ok}}" href="{{pushLink}}">{{event}}: {{status}} · {{at}}</a>{{#uniqueID}} <span class="mono muted" title="apns-unique-id">{{uniqueID}}</span>{{/uniqueID}}{{/lastUpdate}}{{^lastUpdate}}<span class="muted">none yet</span>{{/lastUpdate}}</td></tr>{{/channels}}</tbody>
          </table></div>
          {{#nextChannels}}<p><a id="next-channels" href="{{nextChannels}}">Next channels</a></p>{{/nextChannels}}{{/hasChannels}}
          {{^hasChannels}}<p class="muted">No channel tracks or awaits this name.</p>{{/hasChannels}}
        </section>
        <section class="card">
          <h2>Pushes, newest first</h2>
          {{#hasPushes}}<div class="scroll"><table id="activity-pushes">{{> push-rows}}</table></div>{{/hasPushes}}
          {{^hasPushes}}<p class="muted">No push has gone to this name.</p>{{/hasPushes}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
