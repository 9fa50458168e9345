import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The app's Live Activity types: each declared type with its two schemas (the start's `attributes` and
/// every push's `content_state`) and when it was declared and last changed, and the types devices reported
/// push-to-start tokens for that have no schema yet. Types are declared with the API (`/api/live_activity_types`).
struct LiveActivityTypesPage: Sendable {
    let gate: ConsoleGate
    let types: LiveActivityTypeStore
    let renderer: PageRenderer

    struct View: Sendable {
        struct Row: Sendable {
            let name: String
            let attributes: String
            let contentState: String
            let created: String
            let updated: String
        }

        let rows: [Row]
        let hasRows: Bool
        let seen: [String]
        let hasSeen: Bool
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("live-activity-types") { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let declared: [LiveActivityTypeStore.Stored]
        let seen: [String]
        do {
            declared = try await self.types.list(appID: scope.app.id)
            seen = try await self.types.seenWithoutSchema(appID: scope.app.id)
        } catch { throw ConsoleError.from(error) }
        let rows = declared.map {
            View.Row(
                name: $0.type.name, attributes: Format.indented($0.type.attributes.json), contentState: Format.indented($0.type.contentState.json),
                created: Format.time($0.createdAt), updated: Format.time($0.updatedAt))
        }
        return self.renderer.page(
            "live-activity-types", title: "Live Activity types", nav: Navigation(scope, .activities),
            View(rows: rows, hasRows: !rows.isEmpty, seen: seen, hasSeen: !seen.isEmpty))
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Live Activity types</h1>
        <p class="muted">What the app's activities look like: a push whose content its type refuses is refused before anything is queued,
          since APNs would accept it and the device would silently drop it. Dates are seconds since 2001-01-01 (ActivityKit's default).
          Declare and change types with the API (<span class="mono">/api/live_activity_types</span>); Compose offers a field per property.</p>
        {{#hasRows}}
        <div id="live-activity-types">
        {{#rows}}
        <section class="card live-activity-type">
          <h2 class="mono">{{name}}</h2>
          <p class="muted">Declared {{created}}, last changed {{updated}}.</p>
          <div class="row top">
            <div class="field grow"><h3>Attributes (a start's)</h3><pre class="json" tabindex="0">{{attributes}}</pre></div>
            <div class="field grow"><h3>Content state (every push's)</h3><pre class="json" tabindex="0">{{contentState}}</pre></div>
          </div>
        </section>
        {{/rows}}
        </div>
        {{/hasRows}}
        {{^hasRows}}<p class="muted" id="no-types">No declared types: pushes' content goes unchecked.</p>{{/hasRows}}
        <section class="card">
          <h2>Seen without a schema</h2>
          {{#hasSeen}}<p class="muted">Types devices reported push-to-start tokens for, with no schema yet.</p>
          <ul id="seen-without-schema">{{#seen}}<li class="mono">{{.}}</li>{{/seen}}</ul>{{/hasSeen}}
          {{^hasSeen}}<p class="muted">None: every type devices reported has a schema.</p>{{/hasSeen}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
