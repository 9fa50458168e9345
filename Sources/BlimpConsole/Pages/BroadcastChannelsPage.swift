import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The app's live activity channels (iOS 18 broadcast channels backing Live Activity names), live and deleted: the
/// name, APNs's channel id, the storage policy, when it was created and when and why it was deleted.
struct BroadcastChannelsPage: Sendable {
    let gate: ConsoleGate
    let channels: LiveActivityChannelStore
    let renderer: PageRenderer

    struct View: Sendable {
        struct Row: Sendable {
            let name: String
            let nameLink: String
            let channelID: String
            let policy: String
            let created: String
            let deleted: String?
            let live: Bool
        }

        let rows: [Row]
        let hasRows: Bool
    }

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("broadcast-channels") { request, context in try await self.show(request, context) }
    }

    private func show(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let scope = try await self.gate.scope(request, context)
        let channels: [LiveActivityChannel]
        do { channels = try await self.channels.list(appID: scope.app.id, includingDeleted: true) } catch { throw ConsoleError.from(error) }
        let base = "/console/app/\(scope.app.appKey)"
        let rows = channels.map { Self.row($0, base: base) }
        return self.renderer.page(
            "broadcast-channels", title: "Broadcast channels", nav: Navigation(scope, .activities), View(rows: rows, hasRows: !rows.isEmpty))
    }

    static func row(_ channel: LiveActivityChannel, base: String) -> View.Row {
        let deleted = channel.deletedAt.map { date in
            let why: String =
                switch channel.deletion {
                case .admin?: "by an admin"
                case .ended?: "after an end was published through it"
                case .apns?: "APNs no longer knows it" + (channel.acknowledgedAt == nil ? " (the name's pushes are refused until acknowledged)" : "")
                case nil: ""
                }
            return "\(Format.time(date)), \(why)"
        }
        return View.Row(
            name: channel.name, nameLink: "\(base)/activities/\(Paths.encode(channel.name))", channelID: channel.apnsChannelID,
            policy: channel.storagePolicy == .noMessageStored ? "0: no message stored" : "1: most recent message stored",
            created: Format.time(channel.createdAt), deleted: deleted, live: channel.isLive)
    }

    static let template = #"""
        {{<layout}}{{$main}}{{#body}}
        <h1>Broadcast channels</h1>
        <p class="muted">iOS 18 broadcast channels backing Live Activity names: an update or end of such a name is published once to
          every subscribed device. Create and delete them with the API (<span class="mono">/api/live_activity_channels</span>).</p>
        {{#hasRows}}
        <div class="scroll"><table id="broadcast-channels">
          <thead><tr><th scope="col">Name</th><th scope="col">Channel id</th><th scope="col">Storage policy</th>
            <th scope="col">Created</th><th scope="col">Deleted</th></tr></thead>
          <tbody>{{#rows}}<tr class="{{^live}}muted{{/live}}"><td><a href="{{nameLink}}">{{name}}</a></td><td class="mono">{{channelID}}</td>
            <td>{{policy}}</td><td>{{created}}</td><td>{{#deleted}}{{.}}{{/deleted}}{{^deleted}}live{{/deleted}}</td></tr>{{/rows}}</tbody>
        </table></div>
        {{/hasRows}}
        {{^hasRows}}<p class="muted">No broadcast channels: every Live Activity name is pushed to update tokens one by one.</p>{{/hasRows}}
        {{/body}}{{/main}}{{/layout}}
        """#
}
