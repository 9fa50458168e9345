import BlimpCore
import Foundation
import HTTPTypes
import Hummingbird

/// A listing's pages, as Airship's: `limit`, and the absolute URL of the next page as `next_page` and a `Link` header.
enum Paging {
    /// The `limit` query parameter, 1 to `maximum`; `fallback` (else `maximum`) when absent.
    static func limit(_ text: String?, maximum: Int, fallback: Int? = nil) throws -> Int {
        guard let text else { return fallback ?? maximum }
        guard let limit = Int(text), (1...maximum).contains(limit) else {
            throw AirshipError.invalid(InvalidField("limit", "limit is 1 to \(maximum)"))
        }
        return limit
    }

    /// The `start` query parameter of a listing keyed by ids: the id of a `what` (push, schedule) the page begins at.
    static func start(_ request: Request, _ what: String) throws -> UUID? {
        guard let text = request.uri.queryParameters["start"] else { return nil }
        guard let id = UUID(parsing: String(text)) else { throw AirshipError.invalid(InvalidField("start", "start is a \(what) id")) }
        return id
    }

    /// The answer with `members`, and when there is a next page (`start` its first id), its URL under `path`.
    static func answer(
        _ members: [RawJSON.Member], next start: UUID?, path: String, limit: Int, base: String
    ) -> Response {
        Self.answer(members, next: start?.lowercaseString, path: path, limit: limit, base: base)
    }

    /// The answer with `members`, and when there is a next page (`start` its first key), its URL under `path`,
    /// carrying `filters` (name and value) too.
    static func answer(
        _ members: [RawJSON.Member], next start: String?, path: String, filters: [(String, String)] = [], limit: Int, base: String
    ) -> Response {
        var members = members
        var headers: HTTPFields = [:]
        if let start {
            let query = filters.map { "\($0.0)=\(Self.encoded($0.1))" }.map { "&" + $0 }.joined()
            let url = "\(base)\(path)?limit=\(limit)&start=\(start)\(query)"
            members.append(.init("next_page", .string(url)))
            headers[AirshipJSON.link] = "<\(url)>; rel=\"next\""
        }
        return AirshipJSON.response(headers: headers, json: RawJSON.object(members).text)
    }

    /// `value` as a query parameter's value.
    private static func encoded(_ value: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;#")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}
