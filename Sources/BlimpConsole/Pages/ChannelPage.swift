import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// One channel: its tags by group, named user, attributes and flags, each Live Activity on record with its state
/// (awaiting its token included), last update and last APNs outcomes, and its push-to-start tokens with when the device
/// last reported each.
struct ChannelPage: Sendable {
    let gate: ConsoleGate
    let channels: ChannelStore
    let console: ConsoleStore
    let renderer: PageRenderer

    /// Outcomes read for the channel, newest first, shared out among its tokens.
    static let outcomesRead = 60
    static let outcomesPerToken = 5

    struct View: Sendable {
        struct Group: Sendable { let group: String, tags: [String] }
        struct Attribute: Sendable { let key: String, value: String }
        struct Outcome: Sendable { let status: String, ok: Bool, at: String, pushLink: String }
        struct Activity: Sendable {
            let name: String
            let link: String
            let state: String
            /// How it ended, when it did: `by a push` or `on the device`.
            let ended: String?
            let age: String
            /// The update token's prefix; `nil` while awaiting it or once the device removed the activity.
            let token: String?
            let lastUpdate: LastUpdate?
            let priority10: Int
            let outcomes: [Outcome]
        }
        /// The activity's last update: what APNs answered, with `apns-unique-id` when it gave one.
        struct LastUpdate: Sendable { let event: String, status: String, ok: Bool, at: String, pushLink: String, uniqueID: String? }
        struct StartToken: Sendable { let type: String, token: String, reported: String, outcomes: [Outcome] }

        let channelID: String
        let installed: Bool
        let optIn: Bool
        let background: Bool
        let frequentUpdates: Bool
        let token: String?
        let namedUser: String?
        let namedUserLink: String?
        let created: String
        let registered: String
        let groups: [Group]
        let hasGroups: Bool
        let attributes: [Attribute]
        let hasAttributes: Bool
        let activities: [Activity]
        let hasActivities: Bool
        let startTokens: [StartToken]
        let hasStartTokens: Bool
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("channels/:channel") { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        guard let id = context.parameters.get("channel").flatMap({ UUID(parsing: $0) }) else { throw ConsoleError.notFound }
        let record: ChannelRecord?
        let outcomes: [TokenOutcome]
        do {
            record = try await self.channels.lookup(channelID: id, appID: scope.app.id)
            outcomes = try await self.console.outcomes(channelID: id, appID: scope.app.id, limit: Self.outcomesRead)
        } catch { throw ConsoleError.from(error) }
        guard let record else { throw ConsoleError.notFound }
        let view = Self.view(record, outcomes: outcomes, base: "/console/app/\(scope.app.appKey)", now: self.gate.now())
        return self.renderer.page("channel", title: "Channel \(view.channelID)", nav: Navigation(scope, .channels), view)
    }

    static func view(_ record: ChannelRecord, outcomes: [TokenOutcome], base: String, now: Date) -> View {
        func outcomesOf(_ token: String) -> [View.Outcome] {
            outcomes.filter { $0.token == token }.prefix(Self.outcomesPerToken).map {
                View.Outcome(
                    status: Format.status($0.status, reason: $0.reason), ok: $0.status == 200, at: Format.age($0.sentAt, now: now) + " ago",
                    pushLink: "\(base)/pushes/\($0.pushID.lowercaseString)")
            }
        }
        let groups = record.tagGroups.keys.sorted().map { View.Group(group: $0, tags: record.tagGroups[$0] ?? []) }
        let attributes = record.attributes.keys.sorted().map { View.Attribute(key: $0, value: Self.text(record.attributes[$0] ?? .null)) }
        let activities = record.liveActivities.map { activity in
            Self.view(activity: activity, base: base, now: now, outcomes: activity.token.map(outcomesOf) ?? [])
        }
        let startTokens = record.pushToStartTokens.keys.sorted().map { type in
            let token = record.pushToStartTokens[type] ?? ""
            let reported = record.pushToStartTokensUpdated[type].map { Format.age($0, now: now) + " ago" } ?? "never"
            return View.StartToken(type: type, token: Format.tokenPrefix(token), reported: reported, outcomes: outcomesOf(token))
        }
        return View(
            channelID: record.channelID.lowercaseString, installed: record.installed, optIn: record.optIn,
            background: record.background, frequentUpdates: record.frequentPushesEnabled,
            token: record.pushAddress.map(Format.tokenPrefix), namedUser: record.namedUserID,
            namedUserLink: record.namedUserID.map { "\(base)/channels?by=named_user&q=\(Paths.encode($0))" },
            created: Format.time(record.created), registered: Format.time(record.lastRegistration),
            groups: groups, hasGroups: !groups.isEmpty, attributes: attributes, hasAttributes: !attributes.isEmpty,
            activities: activities, hasActivities: !activities.isEmpty, startTokens: startTokens, hasStartTokens: !startTokens.isEmpty)
    }

    /// An activity's row, here and on its name's page.
    static func view(activity: LiveActivityRecord, base: String, now: Date, outcomes: [View.Outcome] = []) -> View.Activity {
        View.Activity(
            name: activity.name, link: "\(base)/activities/\(Paths.encode(activity.name))",
            state: activity.state.rawValue, ended: Self.ended(activity.standing.endedBy),
            age: Format.age(activity.standing.startedAt, now: now), token: activity.token.map(Format.tokenPrefix),
            lastUpdate: activity.lastUpdate.map { last in
                View.LastUpdate(
                    event: last.event.rawValue, status: Format.status(last.status, reason: last.reason), ok: last.status == 200,
                    at: Format.age(last.sentAt, now: now) + " ago", pushLink: "\(base)/pushes/\(last.pushID.lowercaseString)",
                    uniqueID: last.apnsUniqueID?.lowercaseString)
            },
            priority10: activity.priority10SendsThisHour, outcomes: outcomes)
    }

    private static func ended(_ end: LiveActivityEnd?) -> String? {
        switch end {
        case .push: "by a push"
        case .device: "on the device"
        case nil: nil
        }
    }

    /// An attribute's value as JSON text.
    private static func text(_ value: JSONValue) -> String {
        guard let data = try? JSONEncoder().encode(value) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Channel <span class="mono">{{channelID}}</span></h1>
        <section id="channel" class="card">
          <dl class="facts">
            <div><dt>Installed</dt><dd>{{#installed}}yes{{/installed}}{{^installed}}no{{/installed}}</dd></div>
            <div><dt>Opted in to alerts</dt><dd>{{#optIn}}yes{{/optIn}}{{^optIn}}no{{/optIn}}</dd></div>
            <div><dt>Background pushes</dt><dd>{{#background}}yes{{/background}}{{^background}}no{{/background}}</dd></div>
            <div><dt>Frequent updates</dt><dd>{{#frequentUpdates}}allowed{{/frequentUpdates}}{{^frequentUpdates}}not allowed{{/frequentUpdates}}</dd></div>
            <div><dt>Device token</dt><dd class="mono">{{#token}}{{token}}{{/token}}{{^token}}none{{/token}}</dd></div>
            <div><dt>Named user</dt><dd>{{#namedUser}}<a href="{{namedUserLink}}">{{namedUser}}</a>{{/namedUser}}{{^namedUser}}none{{/namedUser}}</dd></div>
            <div><dt>Created</dt><dd>{{created}}</dd></div>
            <div><dt>Last registration</dt><dd>{{registered}}</dd></div>
          </dl>
        </section>
        <section class="card">
          <h2>Tags</h2>
          {{#hasGroups}}<div class="scroll"><table id="channel-tags"><thead><tr><th scope="col">Group</th><th scope="col">Tags</th></tr></thead>
          <tbody>{{#groups}}<tr><td>{{group}}</td><td>{{#tags}}<span class="tag">{{.}}</span> {{/tags}}</td></tr>{{/groups}}</tbody></table></div>{{/hasGroups}}
          {{^hasGroups}}<p class="muted">No tags.</p>{{/hasGroups}}
        </section>
        <section class="card">
          <h2>Live Activities</h2>
          {{#hasActivities}}<div class="scroll"><table id="live-activities">
            <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Started</th><th scope="col">Token</th><th scope="col">Last update</th><th scope="col">Priority 10 this hour</th><th scope="col">Last APNs outcomes</th></tr></thead>
            <tbody>{{#activities}}<tr><td><a href="{{link}}">{{name}}</a></td><td><span class="state state-{{state}}">{{state}}</span>{{#ended}} <span class="muted">{{ended}}</span>{{/ended}}</td>
              <td>{{age}} ago</td><td class="mono">{{#token}}{{token}}{{/token}}{{^token}}<span class="muted">none</span>{{/token}}</td>
              <td>{{#lastUpdate}}<a class="outcome {{#ok}}ok{{/ok}}" href="{{pushLink}}">{{event}}: {{status}} · {{at}}</a>{{#uniqueID}} <span class="mono muted" title="apns-unique-id">{{uniqueID}}</span>{{/uniqueID}}{{/lastUpdate}}{{^lastUpdate}}<span class="muted">none yet</span>{{/lastUpdate}}</td>
              <td>{{priority10}}</td>
              <td>{{#outcomes}}<a class="outcome {{#ok}}ok{{/ok}}" href="{{pushLink}}">{{status}} · {{at}}</a> {{/outcomes}}{{^outcomes}}<span class="muted">none yet</span>{{/outcomes}}</td></tr>{{/activities}}</tbody>
          </table></div>{{/hasActivities}}
          {{^hasActivities}}<p class="muted">This channel tracks no Live Activity.</p>{{/hasActivities}}
        </section>
        <section class="card">
          <h2>Push-to-start tokens</h2>
          {{#hasStartTokens}}<div class="scroll"><table id="push-to-start">
            <thead><tr><th scope="col">Attributes type</th><th scope="col">Token</th><th scope="col">Last reported by the device</th><th scope="col">Last APNs outcomes</th></tr></thead>
            <tbody>{{#startTokens}}<tr><td>{{type}}</td><td class="mono">{{token}}</td><td>{{reported}}</td>
              <td>{{#outcomes}}<a class="outcome {{#ok}}ok{{/ok}}" href="{{pushLink}}">{{status}} · {{at}}</a> {{/outcomes}}{{^outcomes}}<span class="muted">none yet</span>{{/outcomes}}</td></tr>{{/startTokens}}</tbody>
          </table></div>{{/hasStartTokens}}
          {{^hasStartTokens}}<p class="muted">No push-to-start tokens.</p>{{/hasStartTokens}}
        </section>
        <section class="card">
          <h2>Attributes</h2>
          {{#hasAttributes}}<dl class="facts">{{#attributes}}<div><dt>{{key}}</dt><dd class="mono">{{value}}</dd></div>{{/attributes}}</dl>{{/hasAttributes}}
          {{^hasAttributes}}<p class="muted">No attributes.</p>{{/hasAttributes}}
        </section>
        {{/body}}{{/main}}{{/layout}}
        """#
}
