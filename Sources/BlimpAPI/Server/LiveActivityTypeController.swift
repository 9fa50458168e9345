import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// Live Activity types (master secret; a Blimp extension): what an app's activities look like, so that content they
/// could not decode is refused before anything is queued (``LiveActivityTypeRules``). `PUT
/// /api/live_activity_types/{attributes_type}` declares or changes one (its two schemas, or an example they are
/// derived from), `GET` reads one or lists them with the types devices reported that have no schema yet, `DELETE`
/// removes one.
struct LiveActivityTypeController: Sendable {
    let auth: Authenticator
    let types: LiveActivityTypeStore
    let now: @Sendable () -> Date

    /// The largest type document: schemas for an activity's few dozen fields fit in a few kilobytes.
    static let maximumBody = 256 * 1024

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.get("live_activity_types") { request, _ in try await self.list(request) }
        router.get("live_activity_types/:type") { request, context in try await self.lookup(request, context) }
        router.put("live_activity_types/:type") { request, context in try await self.put(request, context) }
        router.delete("live_activity_types/:type") { request, context in try await self.delete(request, context) }
    }

    /// Declares the type (201) or changes it (200), answering the type, how many activities in flight were started
    /// as it, and what of the change could break them. A change that could break activities in flight is refused
    /// (409) unless `?force=true`: their next update would not decode.
    func put(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let name = try Self.typeName(context)
        let body = try await AirshipJSON.json(from: request, upTo: Self.maximumBody)
        let type: LiveActivityType
        do {
            type = try LiveActivityType.parse(body, name: name)
        } catch {
            throw AirshipError.invalid(error)
        }
        let now = self.now()
        var breaking: [String] = []
        var inFlight = 0
        if let old = try await self.types.type(name, appID: caller.app.id) {
            breaking = type.breakingChanges(from: old.type)
            inFlight = try await self.types.activitiesInFlight(of: name, appID: caller.app.id, now: now)
            let forced = request.uri.queryParameters["force"] == "true"
            if !breaking.isEmpty, inFlight > 0, !forced {
                throw AirshipError(
                    .conflict, "The change could break Live Activities in flight.",
                    details: .init(
                        error: """
                            \(inFlight) activities in flight were started as '\(name)', and their next update might not decode: \
                            \(breaking.joined(separator: "; ")). Send it again with ?force=true to change the type anyway
                            """,
                        path: nil))
            }
        }
        let created = try await self.types.save(
            type, appID: caller.app.id, now: now, by: self.auth.origin(of: caller, request, context), forced: !breaking.isEmpty && inFlight > 0)
        let answer = RawJSON.object([
            .init("ok", .bool(true)), .init("live_activity_type", type.json),
            .init("activities_in_flight", .integer(Int64(inFlight))),
            .init("breaking_changes", .array(breaking.map(RawJSON.string))),
        ])
        return AirshipJSON.response(status: created ? .created : .ok, json: answer.text)
    }

    /// The type, with when it was declared and last changed.
    func lookup(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        guard let stored = try await self.types.type(try Self.typeName(context), appID: caller.app.id) else {
            throw AirshipError.notFound("Live activity type")
        }
        return AirshipJSON.response(json: RawJSON.object([.init("ok", .bool(true)), .init("live_activity_type", Self.json(stored))]).text)
    }

    /// The app's types by name, and the types devices reported push-to-start tokens for that have none.
    func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let stored = try await self.types.list(appID: caller.app.id)
        let seen = try await self.types.seenWithoutSchema(appID: caller.app.id)
        return AirshipJSON.response(json: RawJSON.object([
            .init("ok", .bool(true)), .init("live_activity_types", .array(stored.map(Self.json))),
            .init("seen_without_schema", .array(seen.map(RawJSON.string))),
        ]).text)
    }

    /// Removes the type: its pushes go unchecked again. 204, or 404 when the app has none of that name.
    func delete(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let name = try Self.typeName(context)
        guard try await self.types.delete(name, appID: caller.app.id, at: self.now(), by: self.auth.origin(of: caller, request, context)) else {
            throw AirshipError.notFound("Live activity type")
        }
        return Response(status: .noContent)
    }

    /// The type named in the path, within ``TextLimit/activity`` and without NUL (which PostgreSQL's text cannot
    /// hold): a 400 otherwise, on every route.
    private static func typeName(_ context: some RequestContext) throws -> String {
        guard let name = context.parameters.get("type"), let decoded = name.removingPercentEncoding else {
            throw AirshipError.notFound("Live activity type")
        }
        do {
            return try TextLimit.activity.check(decoded, at: "attributes_type", "attributes_type")
        } catch {
            throw AirshipError.invalid(error)
        }
    }

    private static func json(_ stored: LiveActivityTypeStore.Stored) -> RawJSON {
        guard case .object(var members) = stored.type.json else { return stored.type.json }
        members.append(.init("created_at", .string(AirshipDate.format(stored.createdAt))))
        members.append(.init("updated_at", .string(AirshipDate.format(stored.updatedAt))))
        return .object(members)
    }
}
