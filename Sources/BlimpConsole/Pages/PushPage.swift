import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// One push's report: targets, sends, failures by APNs reason, downgrades, skips and prunes, with a progress bar that
/// the page's script moves while the push fans out (it polls `live`, the report as the API gives it). A queued push
/// can be cancelled here.
struct PushPage: Sendable {
    let gate: ConsoleGate
    let reports: PushReports
    let control: PushControl
    let dispatch: DispatchStore
    let renderer: PageRenderer

    struct View: Sendable {
        struct Count: Sendable { let key: String, label: String, value: String }
        struct Failure: Sendable { let reason: String, count: String }

        let pushID: String
        let liveURL: String
        let cancelURL: String
        let state: String
        let finished: Bool
        let cancellable: Bool
        let failureReason: String?
        let what: String
        let name: String?
        let nameLink: String?
        let priority: Int?
        let accepted: String
        let started: String?
        let finishedAt: String?
        /// What the progress bar measures against: the targets found, or the audience's reach while sending.
        let expected: Int
        let handled: Int
        let counts: [Count]
        let failures: [Failure]
        let hasFailures: Bool
        let notice: String?
        let request: String
        /// Which path the push took, when its name is backed by a live activity channel; the counts are the tokens'.
        let broadcast: Broadcast?
    }

    /// A push's path through a live activity channel: its start subscribed the activities, or its update or end was
    /// published once, with what APNs answered.
    struct Broadcast: Sendable {
        let channelID: String
        let channelsLink: String
        let path: String
        let outcome: String?
        let requestID: String?
        let publishedAt: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("pushes/:push") { request, context in try await self.show(request, context) }
        router.get("pushes/:push/live") { request, context in try await self.live(request, context) }
        router.post("pushes/:push/cancel") { request, context in try await self.cancel(request, context) }
    }

    private func report(_ scope: AppScope, _ context: some RequestContext) async throws -> PushReport {
        guard let id = context.parameters.get("push").flatMap({ UUID(parsing: $0) }) else { throw ConsoleError.notFound }
        do {
            return try await self.reports.report(id, appID: scope.app.id)
        } catch .notFound {
            // An id whose report aged out is told apart from one never issued (its UUIDv7 time is older than the retention).
            guard let retention = try? await self.reports.expiredRetention(of: id, appID: scope.app.id) else { throw ConsoleError.notFound }
            throw ConsoleError.expired("This push expired: reports are kept for \(RetentionPolicy.format(retention)) after the push finished.")
        } catch {
            throw ConsoleError.from(error)
        }
    }

    private func show(_ request: Request, _ context: some RequestContext, notice: String? = nil) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let report = try await self.report(scope, context)
        var expected = report.counts.targets
        if !report.state.isFinished, let kind = Self.kind(of: report), let audience = try? Audience.parse(report.request["audience"] ?? .null) {
            expected = max(expected, (try? await self.dispatch.reach(
                appID: scope.app.id, kind: kind, audience: audience,
                // A push from before priorities were stored asked for the default, 10.
                priority: report.priority ?? .immediate, now: self.gate.now())) ?? 0)
        }
        let view = Self.view(report, base: "/console/app/\(scope.app.appKey)", expected: expected, notice: notice)
        return self.renderer.page("push", title: "Push \(view.pushID.prefix(8))", nav: Navigation(scope, .pushes), view)
    }

    private func live(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let report = try await self.report(scope, context)
        return PageRenderer.json(.object([.init("ok", .bool(true)), .init("push", report.json)]))
    }

    private func cancel(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context, needs: .sender)
        _ = try await self.gate.form(request, of: scope.user)
        let report = try await self.report(scope, context)
        let outcome: PushControl.Outcome
        do { outcome = try await self.control.cancel(report.pushID, appID: scope.app.id, by: scope.origin) } catch { throw ConsoleError.from(error) }
        if case .notAllowed(let state) = outcome {
            return try await self.show(request, context, notice: "The push cannot be cancelled: it is \(state.rawValue).")
        }
        return PageRenderer.redirect(to: "/console/app/\(scope.app.appKey)/pushes/\(report.pushID.lowercaseString)")
    }

    /// What a Live Activity push targets, for its reach.
    private static func kind(of report: PushReport) -> ClaimedPush.Kind? {
        switch report.kind {
        case .alert: return .alert
        case .liveActivity:
            guard let name = report.name, let event = report.event else { return nil }
            return .liveActivity(event, name: name, attributesType: report.attributesType)
        }
    }

    static func view(_ report: PushReport, base: String, expected: Int, notice: String?) -> View {
        let counts = report.counts
        let failed = counts.failed.values.reduce(0, +)
        let id = report.pushID.lowercaseString
        let rows: [(String, String, Int)] = [
            ("targets", "Targets", counts.targets), ("sent", "Sent", counts.sent), ("failed", "Failed", failed),
            ("downgraded_priority", "Sent at priority 5 (budget spent)", counts.downgradedPriority),
            ("skipped_ended", "Skipped: activity ended", counts.skippedEnded),
            ("skipped_already_active", "Skipped: already active", counts.skippedAlreadyActive),
            ("skipped_start_budget", "Skipped: start budget spent", counts.skippedStartBudget),
            ("skipped_awaiting_token", "Skipped: started, awaiting its token", counts.skippedAwaitingToken),
            ("held_awaiting_token", "Held for activities awaiting their token", counts.heldAwaitingToken),
            ("delivered_after_token", "Sent once the token came", counts.deliveredAfterToken),
            ("expired_awaiting_token", "Expired awaiting a token", counts.expiredAwaitingToken),
            ("superseded", "Superseded by a newer push", counts.superseded), ("tokens_pruned", "Tokens pruned", counts.tokensPruned),
        ]
        return View(
            pushID: id, liveURL: "\(base)/pushes/\(id)/live", cancelURL: "\(base)/pushes/\(id)/cancel", state: report.state.rawValue,
            finished: report.state.isFinished, cancellable: report.state == .queued, failureReason: report.failureReason,
            what: report.event.map { "\($0.rawValue) (Live Activity)" } ?? report.kind.rawValue, name: report.name,
            nameLink: report.name.map { "\(base)/activities/\(Paths.encode($0))" }, priority: report.priority?.rawValue,
            accepted: Format.time(report.acceptedAt), started: report.startedAt.map(Format.time),
            finishedAt: report.finishedAt.map(Format.time), expected: report.state.isFinished ? max(1, counts.targets) : max(1, expected),
            handled: report.state.isFinished ? max(1, counts.targets) : counts.sent + failed + counts.superseded,
            counts: rows.map { View.Count(key: $0.0, label: $0.1, value: Format.count($0.2)) },
            failures: counts.failed.sorted { $0.key < $1.key }.map { View.Failure(reason: $0.key.key, count: Format.count($0.value)) },
            hasFailures: !counts.failed.isEmpty, notice: notice, request: report.request.text,
            broadcast: report.broadcast.map { Self.broadcast($0, event: report.event, base: base) })
    }

    private static func broadcast(_ path: PushReport.BroadcastPath, event: LiveActivityNotification.Event?, base: String) -> Broadcast {
        let published = event != .start
        return Broadcast(
            channelID: path.apnsChannelID, channelsLink: "\(base)/broadcast-channels",
            path: published
                ? "published once to the live activity channel (every subscribed device); the counts are the update tokens'"
                : "subscribed the started activities with input-push-channel (they report no update token)",
            outcome: published ? path.status.map { Format.status($0, reason: path.reason) } ?? "not published yet" : nil,
            requestID: path.requestID?.lowercaseString, publishedAt: path.publishedAt.map(Format.time))
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Push <span class="mono">{{pushID}}</span></h1>
        {{#notice}}<p class="alert" role="alert">{{notice}}</p>{{/notice}}
        <section class="card" id="push-report" data-live="{{liveURL}}" data-expected="{{expected}}" {{#finished}}data-finished{{/finished}}>
          <p class="status-line">State <span id="push-state" class="state state-{{state}}" aria-live="polite">{{state}}</span>
            {{#failureReason}}<span id="failure-reason" class="alert">{{failureReason}}</span>{{/failureReason}}</p>
          <label for="push-progress">Progress</label>
          <progress id="push-progress" max="{{expected}}" value="{{handled}}">{{handled}} of {{expected}}</progress>
          <dl class="facts" id="push-counts">{{#counts}}<div><dt>{{label}}</dt><dd data-count="{{key}}">{{value}}</dd></div>{{/counts}}</dl>
          <h2>Failures by APNs reason</h2>
          <ul id="push-failures">{{#failures}}<li><span class="mono">{{reason}}</span>: {{count}}</li>{{/failures}}</ul>
          {{^hasFailures}}<p class="muted" id="no-failures">None.</p>{{/hasFailures}}
        </section>
        <section class="card">
          <dl class="facts">
            <div><dt>What</dt><dd>{{what}}</dd></div>
            {{#name}}<div><dt>Name</dt><dd><a href="{{nameLink}}">{{name}}</a></dd></div>{{/name}}
            {{#priority}}<div><dt>Priority</dt><dd>{{.}}</dd></div>{{/priority}}
            <div><dt>Accepted</dt><dd>{{accepted}}</dd></div>
            <div><dt>Started</dt><dd>{{started}}</dd></div>
            <div><dt>Finished</dt><dd>{{finishedAt}}</dd></div>
          </dl>
          {{#cancellable}}{{#nav.maySend}}
          <form id="cancel-push" method="post" action="{{cancelURL}}">
            <input type="hidden" name="csrf" value="{{nav.csrf}}">
            <button type="submit" class="danger">Cancel this push</button>
          </form>
          {{/nav.maySend}}{{/cancellable}}
          {{#broadcast}}
          <h2>Live activity channel</h2>
          <dl class="facts" id="push-broadcast">
            <div><dt>Channel</dt><dd class="mono"><a href="{{channelsLink}}">{{channelID}}</a></dd></div>
            <div><dt>Path</dt><dd id="broadcast-path">{{path}}</dd></div>
            {{#outcome}}<div><dt>APNs answered</dt><dd id="broadcast-outcome">{{outcome}}</dd></div>{{/outcome}}
            {{#requestID}}<div><dt>apns-request-id</dt><dd class="mono">{{requestID}}</dd></div>{{/requestID}}
            {{#publishedAt}}<div><dt>Published</dt><dd>{{publishedAt}}</dd></div>{{/publishedAt}}
          </dl>
          {{/broadcast}}
          <details><summary>The request as accepted</summary><pre class="json">{{request}}</pre></details>
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
