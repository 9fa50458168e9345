import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// `GET /api/live_activities?name=` (master secret; a Blimp extension): each activity of a name in its state
/// (``LiveActivityState``), counted by state, and listed in pages of channels with their activity.
struct LiveActivityController: Sendable {
    let auth: Authenticator
    let channels: ChannelStore
    let publicURL: PublicURL

    static let maximumPage = 1000
    static let defaultPage = 100

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("live_activities") { request, _ in try await self.list(request) }
    }

    /// A page of the name's activities in channel-id order from `start` (inclusive), `limit` 1 to 1000 (100 when
    /// absent), with `next_page` (and a `Link` header) like the channel listing. The first page (without `start`)
    /// carries the counts by state over all the name's activities; later pages leave them out, so that paging
    /// through a large name reads each activity once.
    func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let query = request.uri.queryParameters
        guard let nameText = query["name"] else { throw AirshipError.invalid(InvalidField("name", "name is required")) }
        let name = try TextLimit.activity.check(String(nameText), at: "name", "name")
        let limit = try Paging.limit(query["limit"].map(String.init), maximum: Self.maximumPage, fallback: Self.defaultPage)
        let start = try query["start"].map { text throws(InvalidField) in
            guard let start = UUID(parsing: String(text)) else { throw InvalidField("start", "start is a channel id") }
            return start
        }
        let page = try await self.channels.liveActivities(named: name, appID: caller.app.id, start: start, limit: limit)
        let counts = start == nil ? try await self.channels.liveActivityCounts(named: name, appID: caller.app.id) : nil
        let nextPage = page.next.map {
            "\(self.publicURL.base(for: request))/api/live_activities?name=\(NamedUserController.queryEscaped(name))&limit=\(limit)&start=\($0.lowercaseString)"
        }
        return try AirshipJSON.response(
            headers: nextPage.map { [AirshipJSON.link: "<\($0)>; rel=\"next\""] } ?? [:],
            Answer(name: name, counts: counts.map(Counts.init), channels: page.activities, nextPage: nextPage))
    }

    struct Answer: Encodable {
        var ok = true
        var name: String
        var counts: Counts?
        var channels: [ChannelActivity]
        var nextPage: String?

        enum CodingKeys: String, CodingKey {
            case ok, name, counts, channels
            case nextPage = "next_page"
        }
    }

    /// The counts by state, every state named.
    struct Counts: Encodable {
        var byState: [LiveActivityState: Int]

        init(_ byState: [LiveActivityState: Int]) { self.byState = byState }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: StateKey.self)
            for state in LiveActivityState.allCases {
                try container.encode(self.byState[state] ?? 0, forKey: StateKey(stringValue: state.rawValue))
            }
        }

        struct StateKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}
