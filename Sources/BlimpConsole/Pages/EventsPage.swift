import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// An app's recent events (what `POST /api/events` streams), newest first, 50 a page, at `/console/app/<key>/events`:
/// filtered by type, channel and push, each with its channel's and push's pages linked. Viewers may read it.
struct EventsPage: Sendable {
    let gate: ConsoleGate
    let events: EventLog
    let renderer: PageRenderer

    static let pageSize = 50

    struct View: Sendable {
        struct Row: Sendable {
            let when: String
            let type: String
            let channel: String?
            let channelLink: String?
            let push: String?
            let pushLink: String?
            let body: String
        }

        let types: [SelectOption]
        let channel: String
        let push: String
        let rows: [Row]
        let hasRows: Bool
        let nextPage: String?
        let window: String
        let error: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("events") { request, context in
            let scope = try await self.gate.scope(request, context)
            return try await self.show(request, scope)
        }
    }

    private func show(_ request: Request, _ scope: AppScope) async throws -> Response {
        let query = try FormFields(query: request)
        let base = "/console/app/\(scope.app.appKey)"
        let given = ["type", "channel", "push"].compactMap { field in query[field].flatMap { $0.isEmpty ? nil : (field, $0) } }
        let text = Dictionary(given, uniquingKeysWith: { first, _ in first })
        func view(_ rows: [View.Row], next: String?, error: String?) -> View {
            View(
                types: [SelectOption(value: "", label: "Any type", selected: text["type"] == nil)]
                    + EventType.allCases.map { SelectOption(value: $0.rawValue, label: $0.rawValue, selected: text["type"] == $0.rawValue) },
                channel: text["channel"] ?? "", push: text["push"] ?? "", rows: rows, hasRows: !rows.isEmpty, nextPage: next,
                window: Self.window, error: error)
        }

        let nav = Navigation(scope, .events)
        let filter: EventLog.RecentFilter
        let start: EventOffset?
        do {
            filter = try Self.filter(text)
            start = try query["start"].map { text in
                guard let offset = EventOffset(parsing: text) else { throw InvalidField("start", "is not an event offset") }
                return offset
            }
        } catch let invalid as InvalidField {
            return self.renderer.page("events", title: "Events", nav: nav, view([], next: nil, error: invalid.description), status: .badRequest)
        }

        let found: [StreamedEvent]
        do {
            found = try await self.events.recent(appID: scope.app.id, matching: filter, before: start, limit: Self.pageSize)
        } catch { throw ConsoleError.from(error) }
        let rows = found.map { event in
            View.Row(
                when: Format.time(event.occurredAt), type: event.type.rawValue, channel: event.channelID?.lowercaseString,
                channelLink: event.channelID.map { "\(base)/channels/\($0.lowercaseString)" }, push: event.pushID?.lowercaseString,
                pushLink: event.pushID.map { "\(base)/pushes/\($0.lowercaseString)" }, body: event.body.text)
        }

        let next = found.count == Self.pageSize ? found.last.map { last in
            "\(base)/events?" + (given + [("start", last.offset.text)]).map { "\($0.0)=\(Paths.queryValue($0.1))" }.joined(separator: "&")
        } : nil
        return self.renderer.page("events", title: "Events", nav: nav, view(rows, next: next, error: nil))
    }

    /// The filter the form's fields give; a field that is not what it names is an ``InvalidField``.
    static func filter(_ text: [String: String]) throws -> EventLog.RecentFilter {
        var filter = EventLog.RecentFilter()
        if let type = text["type"] {
            guard let known = EventType(rawValue: type) else { throw InvalidField("type", "is not an event type") }
            filter.type = known
        }
        if let channel = text["channel"] {
            guard let id = UUID(uuidString: channel.trimmingCharacters(in: .whitespaces)) else { throw InvalidField("channel", "is not a channel id") }
            filter.channelID = id
        }
        if let push = text["push"] {
            guard let id = UUID(uuidString: push.trimmingCharacters(in: .whitespaces)) else { throw InvalidField("push", "is not a push id") }
            filter.pushID = id
        }
        return filter
    }

    /// How far back a filter looks, in words.
    static let window = "A filter looks through the app's newest \(Format.count(EventLog.recentWindow)) events."

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Events</h1>
        <p class="muted">What the app's event stream (<code>POST /api/events</code>) carries, newest first. {{window}}</p>
        <form id="events-filter" class="filters" method="get">
          <label>Type <select name="type">{{#types}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/types}}</select></label>
          <label>Channel <input type="text" name="channel" value="{{channel}}" placeholder="channel id" maxlength="64"></label>
          <label>Push <input type="text" name="push" value="{{push}}" placeholder="push id" maxlength="64"></label>
          <button type="submit" class="secondary">Filter</button>
        </form>
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        {{#hasRows}}
        <div class="scroll"><table id="event-list">
        <thead><tr><th scope="col">Occurred</th><th scope="col">Type</th><th scope="col">Channel</th><th scope="col">Push</th><th scope="col">Body</th></tr></thead>
        <tbody>{{#rows}}<tr><td>{{when}}</td><td class="mono">{{type}}</td>
          <td class="mono">{{#channelLink}}<a href="{{channelLink}}">{{channel}}</a>{{/channelLink}}</td>
          <td class="mono">{{#pushLink}}<a href="{{pushLink}}">{{push}}</a>{{/pushLink}}</td><td class="mono">{{body}}</td></tr>{{/rows}}</tbody>
        </table></div>
        {{#nextPage}}<p><a id="next-page" href="{{nextPage}}">Older events</a></p>{{/nextPage}}
        {{/hasRows}}
        {{^hasRows}}{{^error}}<p class="muted">No events.</p>{{/error}}{{/hasRows}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
