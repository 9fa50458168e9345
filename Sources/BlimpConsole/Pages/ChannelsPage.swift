import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// Channel search: by channel id, device-token prefix, tag (in a group) or named user, a page at a time.
struct ChannelsPage: Sendable {
    let gate: ConsoleGate
    let console: ConsoleStore
    let renderer: PageRenderer

    static let pageSize = 50

    struct View: Sendable {
        struct Row: Sendable {
            let link: String
            let channelID: String
            let token: String?
            let optIn: Bool
            let installed: Bool
            let namedUser: String?
            let registered: String
        }
        struct Choice: Sendable { let value: String, label: String, selected: Bool }

        let choices: [Choice]
        let group: String
        let query: String
        let error: String?
        let rows: [Row]
        let hasRows: Bool
        let nextPage: String?
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("channels") { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let form = try FormFields(query: request)
        let by = form["by"] ?? "tag"
        let group = form["group"] ?? "device"
        let text = form["q"] ?? ""
        var rows: [View.Row] = []
        var next: String?
        var error: String?
        switch Self.search(by: by, group: group, text: text) {
        case .failure(let refusal):
            error = refusal.message
        case .success(let search):
            let page: [ChannelSummary]
            do {
                page = try await self.console.channels(search, appID: scope.app.id, after: form["after"], limit: Self.pageSize)
            } catch { throw ConsoleError.from(error) }
            let base = "/console/app/\(scope.app.appKey)/channels"
            let now = self.gate.now()
            rows = page.map {
                View.Row(
                    link: "\(base)/\($0.channelID.lowercaseString)", channelID: $0.channelID.lowercaseString,
                    token: $0.pushAddress.map(Format.tokenPrefix), optIn: $0.optIn, installed: $0.installed,
                    namedUser: $0.namedUserID, registered: Format.age($0.lastRegistration, now: now) + " ago")
            }
            if page.count == Self.pageSize, let last = page.last {
                var query = URLComponents()
                query.queryItems = [
                    .init(name: "by", value: by), .init(name: "group", value: group), .init(name: "q", value: text),
                    .init(name: "after", value: ConsoleStore.nextCursor(after: last, search: search)),
                ]
                next = base + "?" + (query.percentEncodedQuery ?? "")
            }
        }
        let labels = [("tag", "Tag"), ("channel", "Channel id"), ("token", "Device token prefix"), ("named_user", "Named user")]
        let view = View(
            choices: labels.map { View.Choice(value: $0.0, label: $0.1, selected: $0.0 == by) }, group: group, query: text,
            error: error, rows: rows, hasRows: !rows.isEmpty, nextPage: next)
        return self.renderer.page(
            "channels", title: "Channels", nav: Navigation(scope, .channels), view, status: error == nil ? .ok : .badRequest)
    }

    /// Why a search cannot be made, in words for the form.
    struct Refusal: Error { let message: String }

    /// What the form asks for, or why it cannot be searched.
    static func search(by: String, group: String, text: String) -> Result<ChannelSearch, Refusal> {
        if text.isEmpty { return .success(.all) }
        switch by {
        case "channel":
            guard let id = UUID(parsing: text) else { return .failure(Refusal(message: "A channel id looks like 9c36e8c7-5a73-47c0-9716-99fd3d4197d5.")) }
            return .success(.channel(id))
        case "token":
            let prefix = text.lowercased()
            guard prefix.utf8.count <= 200, prefix.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                return .failure(Refusal(message: "A device token is hexadecimal: 0-9 and a-f."))
            }
            return .success(.tokenPrefix(prefix))
        case "named_user":
            return .success(.namedUser(text))
        default:
            return .success(.tag(text, group: group))
        }
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Channels</h1>
        <form id="channel-search" class="card search" method="get">
          <div class="field"><label for="by">Search by</label>
            <select id="by" name="by">{{#choices}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/choices}}</select></div>
          <div class="field"><label for="group">Tag group</label><input id="group" name="group" value="{{group}}" spellcheck="false"></div>
          <div class="field grow"><label for="q">Search for</label><input id="q" name="q" value="{{query}}" spellcheck="false"
            placeholder="a tag, a channel id, the start of a device token, a named user"></div>
          <button type="submit">Search</button>
          {{#error}}<p id="error-q" class="field-error" role="alert">{{error}}</p>{{/error}}
        </form>
        {{#hasRows}}
        <div class="scroll"><table id="channel-results">
          <thead><tr><th scope="col">Channel</th><th scope="col">Device token</th><th scope="col">Opt-in</th>
            <th scope="col">Named user</th><th scope="col">Registered</th></tr></thead>
          <tbody>{{#rows}}<tr>
            <td><a class="channel-link mono" href="{{link}}">{{channelID}}</a>{{^installed}} <span class="badge">uninstalled</span>{{/installed}}</td>
            <td class="mono">{{token}}</td><td>{{#optIn}}yes{{/optIn}}{{^optIn}}no{{/optIn}}</td>
            <td>{{namedUser}}</td><td>{{registered}}</td></tr>{{/rows}}</tbody>
        </table></div>
        {{#nextPage}}<p><a id="next-page" href="{{nextPage}}">Next page</a></p>{{/nextPage}}
        {{/hasRows}}
        {{^hasRows}}{{^error}}<p class="muted">No channel matches.</p>{{/error}}{{/hasRows}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
