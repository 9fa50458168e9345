import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The app's audit trail (master secret or an API token; a Blimp extension): `GET /api/audit` lists who did what,
/// newest first, a page at a time, filtered by `actor` (a kind such as `api_token`, or an email or token name),
/// `action`, `since` and `until` (ISO 8601). A filter it cannot read is a 400 naming it.
struct AuditController: Sendable {
    let auth: Authenticator
    let audit: AuditLog
    let publicURL: PublicURL

    static let maximumPage = 1000
    static let defaultPage = 100
    static let filterNames = ["actor", "action", "since", "until"]

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("audit") { request, _ in try await self.list(request) }
    }

    private func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let parameters = request.uri.queryParameters
        let given: [(String, String)] = Self.filterNames.compactMap { name in parameters[Substring(name)].map { (name, String($0)) } }
        let text = Dictionary(given) { first, _ in first }
        let filter: AuditFilter
        do {
            filter = try AuditFilter.parse(actor: text["actor"], action: text["action"], since: text["since"], until: text["until"])
        } catch {
            throw AirshipError.invalid(error)
        }
        let limit = try Paging.limit(parameters["limit"].map(String.init), maximum: Self.maximumPage, fallback: Self.defaultPage)
        var start: Int64?
        if let text = parameters["start"] {
            guard let id = Int64(String(text)), id > 0 else { throw AirshipError.invalid(InvalidField("start", "start is an entry id")) }
            start = id
        }
        let page = try await self.audit.list(.app(caller.app.id), filter: filter, limit: limit, start: start)
        return Paging.answer(
            [
                .init("ok", .bool(true)), .init("count", .integer(Int64(page.records.count))),
                .init("entries", .array(page.records.map(Self.json))),
            ],
            next: page.next.map(String.init), path: "/api/audit", filters: given, limit: limit, base: self.publicURL.base(for: request))
    }

    /// An entry as the API answers it: `id`, `at` (UTC), `actor` (its `kind`, and an account's `account_id` and
    /// `email` or a token's `token_id` and `name`), `address`, `action`, `subject` and `details` when present.
    static func json(_ record: AuditRecord) -> RawJSON {
        let entry = record.entry
        var members: [RawJSON.Member] = [
            .init("id", .integer(record.id)),
            .init("at", .string(AirshipDate.format(record.at))),
            .init("actor", Self.json(entry.actor)),
        ]
        if let address = entry.address { members.append(.init("address", .string(address))) }
        members.append(.init("action", .string(entry.action.rawValue)))
        if let subject = entry.subject { members.append(.init("subject", .string(subject))) }
        if let details = entry.details { members.append(.init("details", details)) }
        return .object(members)
    }

    private static func json(_ actor: AuditActor) -> RawJSON {
        var members: [RawJSON.Member] = [.init("kind", .string(actor.kind.rawValue))]
        switch actor {
        case .account(let id, let email): members += [.init("account_id", .integer(id)), .init("email", .string(email))]
        case .apiToken(let id, let name): members += [.init("token_id", .string(id.lowercaseString)), .init("name", .string(name))]
        case .claimedEmail(let email): members.append(.init("email", .string(email)))
        case .masterSecret, .adminToken, .commandLine: break
        }
        return .object(members)
    }
}
