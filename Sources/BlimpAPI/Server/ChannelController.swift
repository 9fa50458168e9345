import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The server API on channels (master secret; https://docs.airship.com/developer/rest-api/ua/operations/channels/): lookup, listing, tags and
/// uninstall. Another app's channel is never found.
struct ChannelController: Sendable {
    let auth: Authenticator
    let channels: ChannelStore
    let publicURL: PublicURL

    /// The longest page, and the most channels one tag or uninstall request names.
    static let maximumPage = 1000

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("channels/:channel") { request, context in try await self.lookup(request, context) }
        router.get("channels") { request, _ in try await self.list(request) }
        router.post("channels/tags") { request, context in try await self.tags(request, context) }
        router.post("channels/uninstall") { request, context in try await self.uninstall(request, context) }
    }

    func lookup(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let channelID = try ChannelID.parameter(context)
        guard let channel = try await self.channels.lookup(channelID: channelID, appID: caller.app.id) else {
            throw AirshipError.notFound("Channel")
        }
        return try AirshipJSON.response(ChannelAnswer(channel: channel))
    }

    /// A page of channels in id order. `next_page` (and a `Link` header) is the absolute URL of the next page,
    /// carrying its own query, because the Python library fetches it as given.
    func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let query = request.uri.queryParameters
        let limit = try Paging.limit(query["limit"].map(String.init), maximum: Self.maximumPage)
        var start: UUID?
        if let text = query["start"] {
            guard let id = UUID(uuidString: String(text)) else {
                throw AirshipError.invalid(InvalidField("start", "start is a channel id"))
            }
            start = id
        }
        let page = try await self.channels.list(appID: caller.app.id, start: start, limit: limit + 1)
        let next = page.count > limit ? page[limit].channelID.uuidString.lowercased() : nil
        let nextPage = next.map { "\(self.publicURL.base(for: request))/api/channels?limit=\(limit)&start=\($0)" }
        return try AirshipJSON.response(
            headers: nextPage.map { [AirshipJSON.link: "<\($0)>; rel=\"next\""] } ?? [:],
            ChannelPage(channels: Array(page.prefix(limit)), nextPage: nextPage)
        )
    }

    /// `{"audience": {"ios_channel": …}, "add" | "remove" | "set": {group: [tags]}}`. Channels the app does not have
    /// are skipped.
    func tags(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let json = try await AirshipJSON.json(from: request, upTo: context.maxUploadSize)
        let body = try TagRequest(json: json, audience: ChannelAudience.init)
        let ids = try body.audience.channelIDs()
        _ = try await self.channels.changeTags(body.operations, channelIDs: ids, appID: caller.app.id)
        return AirshipJSON.ok()
    }

    /// `["id", …]` or `[{"channel_id": "id", "device_type": "ios"}, …]`, 1 to 1000.
    func uninstall(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let entries = try await AirshipJSON.decode([UninstallEntry].self, from: request, context: context)
        guard (1...Self.maximumPage).contains(entries.count) else {
            throw AirshipError.invalid(InvalidField("", "name 1 to \(Self.maximumPage) channels"))
        }
        var ids: [UUID] = []
        for (index, entry) in entries.enumerated() {
            guard let id = UUID(uuidString: entry.channelID) else {
                throw AirshipError.invalid(InvalidField("[\(index)]", "not a channel id"))
            }
            ids.append(id)
        }
        try await self.channels.uninstall(channelIDs: ids.uniqued(), appID: caller.app.id)
        return AirshipJSON.ok()
    }

    struct ChannelAnswer: Encodable {
        var ok = true
        var channel: ChannelRecord
    }

    struct ChannelPage: Encodable {
        var ok = true
        var channels: [ChannelRecord]
        var nextPage: String?

        enum CodingKeys: String, CodingKey {
            case ok, channels
            case nextPage = "next_page"
        }
    }

    /// `{"ios_channel": id | [id]}` or `{"channel": …}`.
    struct ChannelAudience {
        var iosChannel: [String]?
        var channel: [String]?
        var otherPlatforms: Bool

        init(_ audience: JSONObjectReader) throws(InvalidField) {
            self.iosChannel = try audience.strings("ios_channel", orOne: true)
            self.channel = try audience.strings("channel", orOne: true)
            self.otherPlatforms = audience.has("android_channel") || audience.has("amazon_channel")
        }

        func channelIDs() throws -> [UUID] {
            guard !self.otherPlatforms else {
                throw AirshipError.invalid(InvalidField("audience", "Blimp serves iOS channels only"))
            }
            let texts = (self.iosChannel ?? []) + (self.channel ?? [])
            guard (1...ChannelController.maximumPage).contains(texts.count) else {
                throw AirshipError.invalid(
                    InvalidField("audience", "name 1 to \(ChannelController.maximumPage) channels with ios_channel or channel"))
            }
            return try texts.map { text in
                guard let id = UUID(uuidString: text) else {
                    throw AirshipError.invalid(InvalidField("audience", "\"\(text)\" is not a channel id"))
                }
                return id
            }.uniqued()
        }
    }

    /// A channel id, or `{"channel_id": …, "device_type": …}`.
    struct UninstallEntry: Decodable {
        var channelID: String

        enum CodingKeys: String, CodingKey {
            case channelID = "channel_id"
        }

        init(from decoder: any Decoder) throws {
            if let id = try? decoder.singleValueContainer().decode(String.self) {
                self.channelID = id
            } else {
                self.channelID = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .channelID)
            }
        }
    }
}
