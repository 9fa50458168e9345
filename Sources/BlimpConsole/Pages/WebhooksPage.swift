import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// An app's webhook endpoints at `/console/app/<key>/webhooks`, for its admins: each one's state (and why it was
/// disabled), what it was delivered, its backlog, and its last attempts. Endpoints are managed through the API
/// (`/api/webhooks`).
struct WebhooksPage: Sendable {
    let gate: ConsoleGate
    let webhooks: WebhookStore
    let renderer: PageRenderer

    struct View: Sendable {
        struct Attempt: Sendable {
            let at: String
            let batch: String
            let events: String
            let status: String
            let error: String
        }

        struct Endpoint: Sendable {
            let id: String
            let url: String
            let types: String
            let state: String
            let enabled: Bool
            let delivered: String
            let backlog: String
            let pending: String
            let failing: String?
            let attempts: [Attempt]
            let hasAttempts: Bool
        }

        let endpoints: [Endpoint]
        let hasEndpoints: Bool
        let window: String
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("webhooks") { request, context in
            let scope = try await self.gate.scope(request, context, needs: .admin)
            let endpoints: [WebhookStore.Endpoint]
            do {
                endpoints = try await self.webhooks.list(appID: scope.app.id)
            } catch { throw ConsoleError.from(error) }
            let view = View(
                endpoints: endpoints.map(Self.endpoint), hasEndpoints: !endpoints.isEmpty,
                window: Format.count(WebhookStore.backlogWindow))
            return self.renderer.page("webhooks", title: "Webhooks", nav: Navigation(scope, .webhooks), view)
        }
    }

    static func endpoint(_ endpoint: WebhookStore.Endpoint) -> View.Endpoint {
        let attempts = Self.attempts(endpoint.recentAttempts)
        let backlog = endpoint.backlog.map { $0 >= WebhookStore.backlogWindow ? "\(Format.count($0)) or more" : Format.count($0) } ?? "-"
        return View.Endpoint(
            id: endpoint.id, url: endpoint.url, types: endpoint.types?.joined(separator: ", ") ?? "every type",
            state: endpoint.enabled ? "enabled" : "disabled: \(endpoint.disabledReason ?? "")", enabled: endpoint.enabled,
            delivered: Format.count(Int(endpoint.deliveredEvents)), backlog: backlog, pending: Format.count(endpoint.pendingEvents ?? 0),
            failing: endpoint.failingSince.map { "\(endpoint.attempts) failed attempts since \(Format.time($0))" },
            attempts: attempts, hasAttempts: !attempts.isEmpty)
    }

    /// `recent_attempts` as rows.
    static func attempts(_ stored: String) -> [View.Attempt] {
        guard case .array(let entries)? = try? RawJSONParser.parse(Array(stored.utf8)) else { return [] }
        return entries.map { entry in
            func text(_ key: String) -> String {
                switch entry[key] {
                case .string(let value)?: value
                case .null?, nil: ""
                case let other?: other.text
                }
            }
            return View.Attempt(
                at: text("at"), batch: text("batch"), events: text("events"), status: text("status").isEmpty ? "no answer" : text("status"),
                error: text("error"))
        }
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Webhooks</h1>
        <p class="muted">The app's events, delivered to its endpoints in signed batches (<code>/api/webhooks</code> creates, enables, rotates and deletes them). Backlogs are counted among the next {{window}} events.</p>
        {{#hasEndpoints}}
        {{#endpoints}}
        <section class="webhook" id="webhook-{{id}}">
        <h2 class="mono">{{url}}</h2>
        <dl class="facts">
          <dt>State</dt><dd class="{{^enabled}}error{{/enabled}}">{{state}}</dd>
          <dt>Types</dt><dd class="mono">{{types}}</dd>
          <dt>Delivered</dt><dd>{{delivered}} events</dd>
          <dt>Backlog</dt><dd>{{backlog}} events ({{pending}} in the batch being delivered)</dd>
          {{#failing}}<dt>Failing</dt><dd>{{failing}}</dd>{{/failing}}
        </dl>
        {{#hasAttempts}}
        <div class="scroll"><table class="webhook-attempts">
        <thead><tr><th scope="col">When</th><th scope="col">Batch</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Error</th></tr></thead>
        <tbody>{{#attempts}}<tr><td>{{at}}</td><td class="mono">{{batch}}</td><td>{{events}}</td><td>{{status}}</td><td class="mono">{{error}}</td></tr>{{/attempts}}</tbody>
        </table></div>
        {{/hasAttempts}}
        {{^hasAttempts}}<p class="muted">No attempt yet.</p>{{/hasAttempts}}
        </section>
        {{/endpoints}}
        {{/hasEndpoints}}
        {{^hasEndpoints}}<p class="muted">No webhooks.</p>{{/hasEndpoints}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
