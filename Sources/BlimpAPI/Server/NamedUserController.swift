import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The server API on named users (master secret; https://docs.airship.com/developer/rest-api/ua/operations/named-users/): associate, disassociate, tags,
/// lookup, listing and uninstall.
struct NamedUserController: Sendable {
    let auth: Authenticator
    let namedUsers: NamedUserStore
    let publicURL: PublicURL

    /// The longest page, and the most named users one request names.
    static let maximumPage = 1000

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("named_users/associate") { request, context in try await self.associate(request, context, link: true) }
        router.post("named_users/disassociate") { request, context in try await self.associate(request, context, link: false) }
        router.post("named_users/tags") { request, context in try await self.tags(request, context) }
        router.post("named_users/uninstall") { request, context in try await self.uninstall(request, context) }
        router.get("named_users") { request, _ in try await self.lookup(request) }
    }

    /// `{"channel_id", "device_type", "named_user_id"}`.
    func associate(_ request: Request, _ context: some RequestContext, link: Bool) async throws -> Response {
        let caller = try await self.auth.master(request)
        let body = try await AirshipJSON.decode(Association.self, from: request, context: context)
        let namedUser = try NamedUserID.check(body.namedUserID, path: "named_user_id")
        guard let channelID = body.channelID.flatMap(UUID.init(uuidString:)) else {
            throw AirshipError.invalid(InvalidField("channel_id", "an iOS channel_id is required"))
        }
        try await AirshipError.whenMissing(.notFound("Channel")) {
            if link {
                try await self.namedUsers.associate(channelID: channelID, namedUserID: namedUser, appID: caller.app.id)
            } else {
                try await self.namedUsers.disassociate(channelID: channelID, namedUserID: namedUser, appID: caller.app.id)
            }
        }
        return AirshipJSON.ok()
    }

    /// `{"audience": {"named_user_id": id | [id]}, "add" | "remove" | "set": {group: [tags]}}`.
    func tags(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let json = try await AirshipJSON.json(from: request, upTo: context.maxUploadSize)
        let body = try TagRequest(json: json, audience: Audience.init)
        let ids = try Self.check(body.audience.namedUserID, path: "audience.named_user_id")
        try await self.namedUsers.changeTags(body.operations, namedUserIDs: ids, appID: caller.app.id)
        return AirshipJSON.ok()
    }

    /// `{"named_user_id": [id, …]}`: deletes the named users and uninstalls their channels.
    func uninstall(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let json = try await AirshipJSON.json(from: request, upTo: context.maxUploadSize)
        let body = try Audience(JSONObjectReader(json, at: "", allowed: nil))
        let ids = try Self.check(body.namedUserID, path: "named_user_id")
        try await self.namedUsers.uninstall(namedUserIDs: ids, appID: caller.app.id)
        return AirshipJSON.ok()
    }

    /// `?id=` looks one named user up, with its channels from `start` on; without it, a page of named users in id
    /// order from `start` on. Either answer lists at most ``NamedUserStore/maximumChannels`` channels (plus the rest
    /// of the named user that reaches it): a named user with more links to them as `channels_next_page`.
    func lookup(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let query = request.uri.queryParameters
        let base = "\(self.publicURL.base(for: request))/api/named_users"
        if let id = query["id"] {
            let namedUser = try NamedUserID.check(String(id), path: "id")
            let start = try query["start"].map { text throws(InvalidField) in
                guard let start = UUID(parsing: String(text)) else { throw InvalidField("start", "start is a channel id") }
                return start
            }
            guard let record = try await self.namedUsers.lookup(namedUserID: namedUser, appID: caller.app.id, channelsFrom: start) else {
                throw AirshipError.notFound("Named user")
            }
            let listed = ListedNamedUser(record, base: base)
            return try AirshipJSON.response(
                headers: listed.channelsNextPage.map { [AirshipJSON.link: "<\($0)>; rel=\"next\""] } ?? [:],
                NamedUserAnswer(namedUser: listed)
            )
        }
        let limit = try Paging.limit(query["limit"].map(String.init), maximum: Self.maximumPage)
        let start = try query["start"].map { text throws(InvalidField) in try NamedUserID.check(String(text), path: "start") }
        let page = try await self.namedUsers.list(appID: caller.app.id, start: start, limit: limit)
        let nextPage = page.next.map { "\(base)?limit=\(limit)&start=\(Self.queryEscaped($0))" }
        return try AirshipJSON.response(
            headers: nextPage.map { [AirshipJSON.link: "<\($0)>; rel=\"next\""] } ?? [:],
            NamedUserPage(namedUsers: page.records.map { ListedNamedUser($0, base: base) }, nextPage: nextPage)
        )
    }

    /// The ids, each once, in the order first named.
    private static func check(_ ids: [String], path: String) throws -> [String] {
        guard (1...Self.maximumPage).contains(ids.count) else {
            throw AirshipError.invalid(InvalidField(path, "name 1 to \(Self.maximumPage) named users"))
        }
        return try ids.uniqued().map { id throws(InvalidField) in try NamedUserID.check(id, path: path) }
    }

    static func queryEscaped(_ text: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    struct Association: Decodable {
        var channelID: String?
        var namedUserID: String

        enum CodingKeys: String, CodingKey {
            case channelID = "channel_id"
            case namedUserID = "named_user_id"
        }
    }

    /// `{"named_user_id": id | [id]}`.
    struct Audience {
        var namedUserID: [String]

        init(_ audience: JSONObjectReader) throws(InvalidField) {
            self.namedUserID = try audience.required("named_user_id") { key throws(InvalidField) in
                try audience.strings(key, orOne: true)
            }
        }
    }

    /// A named user as answered: its record, and a link to the channels it could not list.
    struct ListedNamedUser: Encodable {
        var record: NamedUserRecord
        var channelsNextPage: String?

        init(_ record: NamedUserRecord, base: String) {
            self.record = record
            self.channelsNextPage = record.moreChannelsFrom.map {
                "\(base)?id=\(NamedUserController.queryEscaped(record.namedUserID))&start=\($0.lowercaseString)"
            }
        }

        enum CodingKeys: String, CodingKey {
            case channelsNextPage = "channels_next_page"
        }

        func encode(to encoder: any Encoder) throws {
            try self.record.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(self.channelsNextPage, forKey: .channelsNextPage)
        }
    }

    struct NamedUserAnswer: Encodable {
        var ok = true
        var namedUser: ListedNamedUser

        enum CodingKeys: String, CodingKey {
            case ok
            case namedUser = "named_user"
        }
    }

    struct NamedUserPage: Encodable {
        var ok = true
        var namedUsers: [ListedNamedUser]
        var nextPage: String?

        enum CodingKeys: String, CodingKey {
            case ok
            case namedUsers = "named_users"
            case nextPage = "next_page"
        }
    }
}
