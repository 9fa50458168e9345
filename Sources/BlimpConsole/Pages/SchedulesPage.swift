import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The app's schedules in creation order (what `GET /api/schedules` lists): name, time, recurrence, whether paused,
/// the next occurrence, the last error, and links to the pushes each fired. Each can be paused, resumed or cancelled
/// here, as `POST /api/schedules/{id}/pause`, `…/resume` and `DELETE` do.
struct SchedulesPage: Sendable {
    let gate: ConsoleGate
    let schedules: ScheduleStore
    let renderer: PageRenderer

    static let pageSize = 50
    /// The most recent pushes a row links to; the rest are counted.
    static let shownPushes = 10

    struct View: Sendable {
        struct PushLink: Sendable { let link: String, shortID: String }
        struct Row: Sendable {
            let id: String
            let name: String
            let when: String
            let recurrence: String
            let paused: Bool
            let next: String
            let lastError: String?
            let lastErrorAt: String?
            let pushes: [PushLink]
            /// `and 12 earlier`, when more pushes were fired than are linked.
            let earlierPushes: String?
            let hasNext: Bool
            let action: String
        }

        let schedules: [Row]
        let hasRows: Bool
        let nextPage: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("schedules") { request, context in try await self.show(request, context) }
        router.post("schedules/:schedule/:action") { request, context in try await self.change(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let start = try FormFields(query: request)["start"].flatMap { UUID(parsing: $0) }
        let page: (records: [ScheduleStore.Record], next: UUID?)
        do { page = try await self.schedules.list(appID: scope.app.id, limit: Self.pageSize, start: start) } catch {
            throw ConsoleError.from(error)
        }
        let base = "/console/app/\(scope.app.appKey)"
        let rows = page.records.map { Self.row($0, base: base) }
        let view = View(schedules: rows, hasRows: !rows.isEmpty, nextPage: page.next.map { "\(base)/schedules?start=\($0.lowercaseString)" })
        return self.renderer.page("schedules", title: "Schedules", nav: Navigation(scope, .schedules), view)
    }

    /// Pauses, resumes or cancels one schedule, then shows the list again.
    private func change(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context, needs: .sender)
        _ = try await self.gate.form(request, of: scope.user)
        guard let id = context.parameters.get("schedule").flatMap({ UUID(parsing: $0) }) else { throw ConsoleError.notFound }
        let found: Bool
        do {
            switch context.parameters.get("action") {
            case "pause": found = try await self.schedules.setPaused(id, true, appID: scope.app.id, now: self.gate.now(), by: scope.origin)
            case "resume": found = try await self.schedules.setPaused(id, false, appID: scope.app.id, now: self.gate.now(), by: scope.origin)
            case "cancel": found = try await self.schedules.cancel(id, appID: scope.app.id, at: self.gate.now(), by: scope.origin)
            default: throw ConsoleError.notFound
            }
        } catch { throw ConsoleError.from(error) }
        guard found else { throw ConsoleError.notFound }
        return PageRenderer.redirect(to: "/console/app/\(scope.app.appKey)/schedules")
    }

    static func row(_ record: ScheduleStore.Record, base: String) -> View.Row {
        let id = record.scheduleID.lowercaseString
        let local = record.schedule.time.isLocal
        let pushes = record.pushIDs.suffix(Self.shownPushes).reversed().map {
            View.PushLink(link: "\(base)/pushes/\($0.lowercaseString)", shortID: String($0.lowercaseString.prefix(8)))
        }
        return View.Row(
            id: id, name: record.schedule.name ?? "(unnamed)", when: ScheduleText.time(record.schedule.time.wallClock, local: local),
            recurrence: ScheduleText.recurrence(record.schedule.recurrence, local: local), paused: record.paused,
            next: record.nextOccurrence.map { ScheduleText.time($0, local: local) } ?? "none left", lastError: record.lastError,
            lastErrorAt: record.lastErrorAt.map(Format.time), pushes: Array(pushes), earlierPushes: record.pushIDs.count > pushes.count ? "and \(record.pushIDs.count - pushes.count) earlier" : nil,
            hasNext: record.nextOccurrence != nil, action: "\(base)/schedules/\(id)")
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Schedules</h1>
        {{#hasRows}}
        <div class="scroll"><table id="schedule-list">
        <thead><tr><th scope="col">Name</th><th scope="col">Time</th><th scope="col">Repeats</th><th scope="col">Next</th>
          <th scope="col">Last error</th><th scope="col">Pushes fired</th><th scope="col"></th></tr></thead>
        <tbody>{{#schedules}}<tr id="schedule-{{id}}" class="schedule">
          <td>{{name}}<br><span class="mono muted">{{id}}</span></td><td>{{when}}</td><td>{{recurrence}}</td>
          <td>{{#paused}}<span class="state state-paused">paused</span><br>{{/paused}}{{next}}</td>
          <td>{{#lastError}}<span class="alert">{{lastError}}</span>{{#lastErrorAt}}<br>{{lastErrorAt}}{{/lastErrorAt}}{{/lastError}}</td>
          <td>{{#pushes}}<a class="push-link mono" href="{{link}}">{{shortID}}</a> {{/pushes}}{{#earlierPushes}}<span class="muted">{{earlierPushes}}</span>{{/earlierPushes}}</td>
          <td>{{#nav.maySend}}{{#hasNext}}{{^paused}}<form class="inline pause-schedule" method="post" action="{{action}}/pause"><input type="hidden" name="csrf" value="{{nav.csrf}}"><button type="submit" class="secondary small">Pause</button></form>{{/paused}}{{/hasNext}}
            {{#paused}}<form class="inline resume-schedule" method="post" action="{{action}}/resume"><input type="hidden" name="csrf" value="{{nav.csrf}}"><button type="submit" class="small">Resume</button></form>{{/paused}}
            <form class="inline cancel-schedule" method="post" action="{{action}}/cancel"><input type="hidden" name="csrf" value="{{nav.csrf}}"><button type="submit" class="danger small">Cancel</button></form>{{/nav.maySend}}</td>
        </tr>{{/schedules}}</tbody></table></div>
        {{#nextPage}}<p><a id="next-page" href="{{nextPage}}">More schedules</a></p>{{/nextPage}}
        {{/hasRows}}
        {{^hasRows}}<p class="muted">No schedules. <a href="compose">Compose a push</a> and schedule it.</p>{{/hasRows}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
