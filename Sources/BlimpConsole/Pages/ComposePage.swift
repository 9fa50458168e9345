import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The marketer's page: start, update or end a Live Activity by name for an audience of tags, named users and channels.
/// When the push's Live Activity type has a schema (a start's `attributes_type`; for an update or end, the type the
/// name was last started as, or the type the form names), the page offers a field per property (``SchemaFields``)
/// instead of hand-written JSON. A start may end after a number of minutes (`end_after`). Every action prepares the
/// push as `POST /api/push` does (``PushPreparation``: its content against its type, a name backed by a live activity
/// channel following ``BroadcastRules``, the payload built once and sized, a start's ending), so the form refuses what
/// the API refuses, with its words. Preview shows that payload, its size against its limit and how many tokens the
/// audience reaches now; sending queues it and lands on the push's live report. Scheduling instead checks the form's
/// schedule as `POST /api/schedules` would, creates it and lands on the app's schedules.
struct ComposePage: Sendable {
    let gate: ConsoleGate
    let intake: PushIntake
    let schedules: ScheduleStore
    let dispatch: DispatchStore
    let types: LiveActivityTypeStore
    let inputs: PushPreparationInputs
    let renderer: PageRenderer

    struct View: Sendable {
        struct Row: Sendable {
            /// `aud` for an included selector, `not` for an excluded one: the fields' name prefix.
            let prefix: String
            let index: Int
            let kinds: [SelectOption]
            let group: String
            let value: String
        }
        struct Errors: Sendable {
            let form, event, name, contentState, alertTitle, attributesType, attributes, priority, staleDate, dismissalDate,
                relevanceScore, endAfter, audience: String?

            init(_ errors: [String: String]) {
                (self.form, self.event, self.name, self.contentState) = (errors["form"], errors["event"], errors["name"], errors["content_state"])
                (self.alertTitle, self.attributesType, self.attributes) = (errors["alert_title"], errors["attributes_type"], errors["attributes"])
                (self.priority, self.staleDate, self.dismissalDate) = (errors["priority"], errors["stale_date"], errors["dismissal_date"])
                (self.relevanceScore, self.endAfter, self.audience) = (errors["relevance_score"], errors["end_after"], errors["audience"])
            }
        }
        struct Preview: Sendable {
            let payload: String
            let size: Int
            let limit: Int
            let fits: Bool
            let reach: String
            /// `token` or `tokens`, as many as ``reach``.
            let reachUnit: String
            let pushType: String
            let priority: Int
        }
        /// The fields of the push's declared type.
        struct Typed: Sendable {
            let name: String
            let contentState: [SchemaFields.View]
            let attributes: [SchemaFields.View]
            let hasAttributes: Bool
        }

        let action: String
        let events: [SelectOption]
        let priorities: [SelectOption]
        let matches: [SelectOption]
        let form: ComposeForm
        let schedule: ScheduleForm.View
        let include: [Row]
        let exclude: [Row]
        let errors: Errors
        let hasErrors: Bool
        let preview: Preview?
        let typed: Typed?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("compose") { request, context in try await self.show(request, context) }
        router.post("compose") { request, context in try await self.submit(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context, needs: .sender)
        let query = try FormFields(query: request)
        var form = ComposeForm()
        form.name = query["name"] ?? ""
        form.event = query["event"] ?? form.event
        form.attributesType = query["attributes_type"] ?? ""
        let (_, type) = try await self.type(of: form, appID: scope.app.id)
        return self.page(scope, form, ScheduleForm(), type: type, errors: [:], preview: nil)
    }

    /// The declared type the form's push is checked against, when it has one (what the page offers fields for), and
    /// what was read to find it, which checking the push needs too.
    private func type(of form: ComposeForm, appID: Int64) async throws -> (LiveActivityTypeRules.Inputs, LiveActivityType?) {
        guard !form.name.isEmpty, let event = LiveActivityNotification.Event(rawValue: form.event) else { return (.init(), nil) }
        let named = form.attributesType.isEmpty ? nil : form.attributesType
        do {
            let inputs = try await self.types.inputs(names: [form.name], types: named.map { [$0] } ?? [], appID: appID)
            return (inputs, inputs.type(of: event, name: form.name, named: named))
        } catch { throw ConsoleError.from(error) }
    }

    private func submit(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context, needs: .sender)
        let fields = try await self.gate.form(request, of: scope.user)
        let form = ComposeForm(fields)
        let scheduleForm = ScheduleForm(fields)
        let now = self.gate.now()
        let (inputs, type) = try await self.type(of: form, appID: scope.app.id)
        func refused(_ errors: [String: String], status: HTTPResponse.Status = .badRequest) -> Response {
            self.page(scope, form, scheduleForm, type: type, errors: errors, preview: nil, status: status)
        }
        if fields["action"] == "fields" { return self.page(scope, form, scheduleForm, type: type, errors: [:], preview: nil) }
        let push: Push
        switch form.push(type: type) {
        case .failure(let errors): return refused(errors.byField)
        case .success(let read): push = read
        }
        if fields["action"] == "schedule" {
            let schedule: ScheduledPush
            switch scheduleForm.schedule(of: push, now: now) {
            case .failure(let errors): return refused(errors.byField)
            case .success(let checked): schedule = checked
            }
            if case .failure(let refusal) = try await self.prepare(push, schedule: schedule, appID: scope.app.id, types: inputs, now: now) {
                return refused(Self.errors(refusal.field), status: refusal.isChannelGone ? .conflict : .badRequest)
            }
            do {
                _ = try await self.schedules.create([schedule], appID: scope.app.id, now: now, by: scope.origin)
            } catch { throw ConsoleError.from(error) }
            return PageRenderer.redirect(to: "/console/app/\(scope.app.appKey)/schedules")
        }
        let prepared: PreparedPush
        switch try await self.prepare(push, schedule: nil, appID: scope.app.id, types: inputs, now: now) {
        case .failure(let refusal): return refused(Self.errors(refusal.field), status: refusal.isChannelGone ? .conflict : .badRequest)
        case .success(let ready): prepared = ready
        }
        guard fields["action"] == "send" else {
            let preview = try await self.preview(prepared, appID: scope.app.id, now: now)
            return self.page(scope, form, scheduleForm, type: type, errors: [:], preview: preview)
        }
        let acceptance: PushAcceptance
        do {
            acceptance = try await self.intake.accept(
                PushSubmission(appID: scope.app.id, prepared: [prepared], idempotencyKey: "console:" + form.idempotencyKey, origin: scope.origin))
        } catch { throw ConsoleError.from(error) }
        switch acceptance {
        case .accepted(_, let pushIDs):
            return PageRenderer.redirect(to: "/console/app/\(scope.app.appKey)/pushes/\(pushIDs.first?.lowercaseString ?? "")")
        }
    }

    /// `push` prepared as the API prepares it (``PushPreparation``), as `schedule`'s push when it is scheduled, or the
    /// refusal; `types` are the type inputs the page already read for its fields.
    private func prepare(
        _ push: Push, schedule: ScheduledPush?, appID: Int64, types: LiveActivityTypeRules.Inputs, now: Date
    ) async throws -> Result<PreparedPush, PushRefusal> {
        let inputs: PushPreparation.Inputs
        do {
            inputs = try await self.inputs.read(for: [push], appID: appID, types: types)
        } catch { throw ConsoleError.from(error) }
        do {
            if let schedule { return .success(try PushPreparation.prepare(schedules: [schedule], paths: [""], inputs: inputs, now: now)[0]) }
            return .success(try PushPreparation.prepare([push], paths: [""], inputs: inputs, now: now)[0])
        } catch {
            return .failure(error)
        }
    }

    /// A refusal shown next to the form field it is about, with its path as the API answers it; and next to the
    /// type's field for the path, when the form shows one (`notification.ios.live_activity.content_state.home`).
    /// A scheduled push's path (`push.notification…`) is shown as the push's.
    static func errors(_ refusal: InvalidField) -> [String: String] {
        let path = refusal.path.hasPrefix("push.") ? String(refusal.path.dropFirst("push.".count)) : refusal.path
        let field = path.hasPrefix("schedule") ? ScheduleForm.field(of: path) : ComposeForm.field(of: path)
        var errors = [field: path.isEmpty ? refusal.message : "\(path): \(refusal.message)"]
        let activity = "notification.ios.live_activity."
        if path.hasPrefix(activity) { errors[String(path.dropFirst(activity.count))] = refusal.message }
        return errors
    }

    /// The push's APNs payload as prepared (its timestamp set when it is accepted), and how many tokens it would reach.
    private func preview(_ prepared: PreparedPush, appID: Int64, now: Date) async throws -> View.Preview {
        let payload = prepared.payload
        var reach = 0
        if case .liveActivity(let activity) = prepared.push.content {
            do {
                reach = try await self.dispatch.reach(
                    appID: appID, kind: .liveActivity(activity.event, name: activity.name, attributesType: activity.attributesType),
                    audience: prepared.push.audience, priority: payload.priority, now: now)
            } catch { throw ConsoleError.from(error) }
        }
        let size = payload.body.utf8.count
        return View.Preview(
            payload: payload.body, size: size, limit: prepared.sizeLimit, fits: size <= prepared.sizeLimit,
            reach: Format.count(reach), reachUnit: reach == 1 ? "token" : "tokens", pushType: payload.pushType.rawValue,
            priority: payload.priority.rawValue)
    }

    private func page(
        _ scope: AppScope, _ form: ComposeForm, _ schedule: ScheduleForm, type: LiveActivityType?, errors: [String: String],
        preview: View.Preview?, status: HTTPResponse.Status = .ok
    ) -> Response {
        func options(_ pairs: [(String, String)], _ selected: String) -> [SelectOption] {
            pairs.map { SelectOption(value: $0.0, label: $0.1, selected: $0.0 == selected) }
        }
        let kinds = [("tag", "Tag"), ("named_user", "Named user"), ("channel", "Channel id")]
        func rows(_ prefix: String, _ selectors: [ComposeForm.Selector]) -> [View.Row] {
            selectors.enumerated().map {
                View.Row(prefix: prefix, index: $0.offset, kinds: options(kinds, $0.element.kind), group: $0.element.group, value: $0.element.value)
            }
        }
        let view = View(
            action: "/console/app/\(scope.app.appKey)/compose",
            events: options([("start", "Start"), ("update", "Update"), ("end", "End")], form.event),
            priorities: options([("10", "10: immediately (rationed per device)"), ("5", "5: when convenient (not rationed)")], form.priority),
            matches: options([("all", "all of"), ("any", "any of")], form.match),
            form: form, schedule: schedule.view(errors: errors), include: rows("aud", form.include), exclude: rows("not", form.exclude), errors: View.Errors(errors),
            hasErrors: !errors.isEmpty, preview: preview, typed: type.map { Self.typed($0, form, errors: errors) })
        return self.renderer.page("compose", title: "Compose", nav: Navigation(scope, .compose), view, status: status)
    }

    /// The fields of `type` with the form's values: its content state's, and for a start its attributes'.
    static func typed(_ type: LiveActivityType, _ form: ComposeForm, errors: [String: String]) -> View.Typed {
        let attributes = form.event == "start" ? SchemaFields(section: "attributes", schema: type.attributes).views(values: form.typed, errors: errors) : []
        return View.Typed(
            name: type.name, contentState: SchemaFields(section: "content_state", schema: type.contentState).views(values: form.typed, errors: errors),
            attributes: attributes, hasAttributes: !attributes.isEmpty)
    }

    /// One selector's row: its kind, tag group and value.
    static let rowTemplate = #"""
        <div class="row selector">
          <div class="field"><label for="{{prefix}}_kind_{{index}}">Kind</label><select id="{{prefix}}_kind_{{index}}" name="{{prefix}}_kind_{{index}}">{{#kinds}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/kinds}}</select></div>
          <div class="field"><label for="{{prefix}}_group_{{index}}">Tag group</label><input id="{{prefix}}_group_{{index}}" name="{{prefix}}_group_{{index}}" value="{{group}}" spellcheck="false"></div>
          <div class="field grow"><label for="{{prefix}}_value_{{index}}">Value</label><input id="{{prefix}}_value_{{index}}" name="{{prefix}}_value_{{index}}" value="{{value}}" spellcheck="false"></div>
        </div>
        """#

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Compose a Live Activity push</h1>
        {{#preview}}
        <section id="preview" class="card" aria-live="polite">
          <h2>Preview</h2>
          <dl class="facts">
            <div><dt>Reaches now</dt><dd><span id="audience-count">{{reach}}</span> {{reachUnit}}</dd></div>
            <div><dt>Size</dt><dd id="payload-size" class="{{^fits}}alert{{/fits}}">{{size}} of {{limit}} bytes</dd></div>
            <div><dt>apns-push-type</dt><dd>{{pushType}}</dd></div>
            <div><dt>apns-priority</dt><dd>{{priority}}</dd></div>
          </dl>
          <h3>APNs payload, exactly as sent (the timestamp is set when the push is accepted)</h3>
          <pre id="apns-payload" class="json" tabindex="0">{{payload}}</pre>
        </section>
        {{/preview}}
        {{#hasErrors}}<p class="alert" role="alert" id="form-errors">The push cannot be sent or scheduled as it is: see the fields marked below.</p>{{/hasErrors}}
        {{#errors.form}}<p id="error-form" class="field-error" role="alert">{{errors.form}}</p>{{/errors.form}}
        <form id="compose" method="post" action="{{action}}" class="compose">
          <input type="hidden" name="csrf" value="{{nav.csrf}}">
          {{#form}}<input type="hidden" name="idempotency_key" value="{{idempotencyKey}}">{{/form}}
          <section class="card">
            <h2>Activity</h2>
            <div class="row">
              <div class="field"><label for="event">Event</label>
                <select id="event" name="event">{{#events}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/events}}</select>
                {{#errors.event}}<p id="error-event" class="field-error">{{errors.event}}</p>{{/errors.event}}</div>
              <div class="field grow"><label for="name">Activity name</label>
                <input id="name" name="name" value="{{form.name}}" required spellcheck="false" placeholder="e.g. match-1234">
                {{#errors.name}}<p id="error-name" class="field-error">{{errors.name}}</p>{{/errors.name}}</div>
              <div class="field"><label for="priority">Priority</label>
                <select id="priority" name="priority">{{#priorities}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/priorities}}</select>
                {{#errors.priority}}<p id="error-priority" class="field-error">{{errors.priority}}</p>{{/errors.priority}}</div>
            </div>
            <div class="row">
              <div class="field grow"><label for="attributes_type">Attributes type (a start's; for an update or end, optional: the type the name was started as)</label>
                <input id="attributes_type" name="attributes_type" value="{{form.attributesType}}" spellcheck="false" placeholder="MatchAttributes">
                {{#errors.attributesType}}<p id="error-attributes_type" class="field-error">{{errors.attributesType}}</p>{{/errors.attributesType}}</div>
              <div class="field"><button id="fields-button" type="submit" name="action" value="fields" class="secondary" formnovalidate>Show the type's fields</button></div>
            </div>
            {{#typed}}
            <fieldset id="content_state-fields"><legend>Content state of {{name}}, from its schema (times in UTC)</legend>
              <div class="row">{{#contentState}}{{> schema-field}}{{/contentState}}</div>
            </fieldset>
            {{/typed}}
            {{^typed}}<p class="muted" id="untyped-note">When the name's Live Activity type has a schema (the Live Activity types page), Show the type's fields offers a field per property.</p>{{/typed}}
            <div class="field"><label for="content_state">{{#typed}}Raw content state (JSON object; when filled it is sent as written and the fields above are ignored){{/typed}}{{^typed}}Content state (JSON object){{/typed}}</label>
              <textarea id="content_state" name="content_state" rows="5" spellcheck="false" placeholder='{"score": "2-1"}'>{{form.contentState}}</textarea>
              {{#errors.contentState}}<p id="error-content_state" class="field-error">{{errors.contentState}}</p>{{/errors.contentState}}</div>
            <div class="row">
              <div class="field grow"><label for="alert_title">Alert title (optional)</label><input id="alert_title" name="alert_title" value="{{form.alertTitle}}">
                {{#errors.alertTitle}}<p id="error-alert_title" class="field-error">{{errors.alertTitle}}</p>{{/errors.alertTitle}}</div>
              <div class="field grow"><label for="alert_body">Alert body (optional)</label><input id="alert_body" name="alert_body" value="{{form.alertBody}}"></div>
            </div>
            <fieldset class="start-only"><legend>For a start</legend>
              {{#typed}}{{#hasAttributes}}<div class="row" id="attributes-fields">{{#attributes}}{{> schema-field}}{{/attributes}}</div>{{/hasAttributes}}{{/typed}}
              <div class="field"><label for="attributes">{{#typed.hasAttributes}}Raw attributes (JSON object; when filled it is sent as written and the fields above are ignored){{/typed.hasAttributes}}{{^typed.hasAttributes}}Attributes (JSON object){{/typed.hasAttributes}}</label>
                <textarea id="attributes" name="attributes" rows="3" spellcheck="false">{{form.attributes}}</textarea>
                {{#errors.attributes}}<p id="error-attributes" class="field-error">{{errors.attributes}}</p>{{/errors.attributes}}</div>
              <div class="field"><label for="end_after">End after (minutes, 1 to 720, optional: the end goes out that long after the start)</label>
                <input id="end_after" name="end_after" inputmode="numeric" value="{{form.endAfter}}" placeholder="e.g. 90">
                {{#errors.endAfter}}<p id="error-end_after" class="field-error">{{errors.endAfter}}</p>{{/errors.endAfter}}</div>
            </fieldset>
            <div class="row">
              <div class="field"><label for="stale_date">Stale date (UTC, optional)</label>
                <input id="stale_date" name="stale_date" type="datetime-local" value="{{form.staleDate}}">
                {{#errors.staleDate}}<p id="error-stale_date" class="field-error">{{errors.staleDate}}</p>{{/errors.staleDate}}</div>
              <div class="field"><label for="dismissal_date">Dismissal date (UTC, optional)</label>
                <input id="dismissal_date" name="dismissal_date" type="datetime-local" value="{{form.dismissalDate}}">
                {{#errors.dismissalDate}}<p id="error-dismissal_date" class="field-error">{{errors.dismissalDate}}</p>{{/errors.dismissalDate}}</div>
              <div class="field"><label for="relevance_score">Relevance score (optional)</label>
                <input id="relevance_score" name="relevance_score" inputmode="decimal" value="{{form.relevanceScore}}">
                {{#errors.relevanceScore}}<p id="error-relevance_score" class="field-error">{{errors.relevanceScore}}</p>{{/errors.relevanceScore}}</div>
            </div>
          </section>
          <section class="card">
            <h2>Audience</h2>
            <p class="muted">Leave every row empty to reach every channel tracking the name.</p>
            <div class="field"><label for="match">Channels matching</label>
              <select id="match" name="match">{{#matches}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/matches}}</select></div>
            {{#include}}{{> audience-row}}{{/include}}
            <h3>But not</h3>
            {{#exclude}}{{> audience-row}}{{/exclude}}
            {{#errors.audience}}<p id="error-audience" class="field-error">{{errors.audience}}</p>{{/errors.audience}}
          </section>
          {{#schedule}}{{> schedule-fields}}{{/schedule}}
          <div class="actions">
            <button id="preview-button" type="submit" name="action" value="preview" class="secondary">Preview</button>
            <button id="send-button" type="submit" name="action" value="send">Send now</button>
            <button id="schedule-button" type="submit" name="action" value="schedule" class="secondary">Schedule</button>
          </div>
        </form>
        {{/body}}{{/main}}{{/layout}}
        """#
}
