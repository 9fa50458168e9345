import BlimpCore
import BlimpStore
import Foundation
import HTTPTypes
import Hummingbird

/// Airship's schedule API (master secret or an API token; what the Python library's `ScheduledPush` and
/// `ScheduledList` call): `POST /api/schedules` creates one schedule or an array of them, `GET /api/schedules` lists
/// them a page at a time, and each schedule's URL is read (`GET`), replaced (`PUT`), cancelled (`DELETE`), paused and
/// resumed (`POST …/pause`, `…/resume`). Create-and-send and template schedules are refused with a 400 that says so.
struct ScheduleController: Sendable {
    let auth: Authenticator
    let schedules: ScheduleStore
    let preparer: PushPreparer
    let publicURL: PublicURL
    let now: @Sendable () -> Date

    static let maximumPage = 1000
    static let defaultPage = 100

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("schedules") { request, context in try await self.create(request, context) }
        router.get("schedules") { request, _ in try await self.list(request) }
        router.post("schedules/create-and-send") { _, _ -> Response in
            throw AirshipError.invalid(InvalidField("", "Blimp does not create and send: create the channels, then schedule a push"))
        }
        router.post("templates/schedules") { _, _ -> Response in
            throw AirshipError.invalid(InvalidField("", "Blimp has no templates: schedule a push"))
        }
        router.get("schedules/:schedule") { request, context in try await self.lookup(request, context) }
        router.put("schedules/:schedule") { request, context in try await self.replace(request, context) }
        router.delete("schedules/:schedule") { request, context in try await self.cancel(request, context) }
        router.post("schedules/:schedule/pause") { request, context in try await self.pause(request, context, true) }
        router.post("schedules/:schedule/resume") { request, context in try await self.pause(request, context, false) }
    }

    /// 201 with the new schedules' absolute URLs, ids and objects.
    private func create(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request, .push)
        let json = try await AirshipJSON.json(from: request, upTo: PushController.maximumBody)
        let schedules = try await self.checked(json, appID: caller.app.id)
        let ids = try await self.schedules.create(
            schedules, appID: caller.app.id, now: self.now(), by: self.auth.origin(of: caller, request, context))
        let urls = ids.map { self.url(of: $0, request) }
        let now = self.now()
        let objects = zip(ids, schedules).map { id, schedule in
            Self.json(ScheduleStore.Record(created: id, schedule: schedule, at: now), url: self.url(of: id, request))
        }
        return AirshipJSON.response(status: .created, json: RawJSON.object([
            .init("ok", .bool(true)),
            .init("operation_id", .string(UUID.random().lowercaseString)),
            .init("schedule_urls", .array(urls.map(RawJSON.string))),
            .init("schedule_ids", .array(ids.map { .string($0.lowercaseString) })),
            .init("schedules", .array(objects)),
        ]).text)
    }

    /// The schedule object, unwrapped, as the library's `ScheduledPush.from_url` reads it.
    private func lookup(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let id = try Self.scheduleID(context)
        guard let record = try await self.schedules.schedule(id, appID: caller.app.id) else { throw AirshipError.notFound("Schedule") }
        return AirshipJSON.response(json: Self.json(record, url: self.url(of: id, request)).text)
    }

    /// Replaces the whole schedule (the library always sends `recurring.paused`, so an update through it also sets
    /// whether the schedule is paused).
    private func replace(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request, .push)
        let id = try Self.scheduleID(context)
        let json = try await AirshipJSON.json(from: request, upTo: PushController.maximumBody)
        guard case .object = json else { throw AirshipError.invalid(InvalidField("", "an update carries one schedule object")) }
        let schedule = try await self.checked(json, appID: caller.app.id)[0]
        let origin = self.auth.origin(of: caller, request, context)
        guard try await self.schedules.replace(id, with: schedule, appID: caller.app.id, now: self.now(), by: origin) else {
            throw AirshipError.notFound("Schedule")
        }
        return AirshipJSON.response(json: RawJSON.object([
            .init("ok", .bool(true)),
            .init("operation_id", .string(UUID.random().lowercaseString)),
            .init("schedule_urls", .array([.string(self.url(of: id, request))])),
        ]).text)
    }

    private func cancel(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request, .push)
        let id = try Self.scheduleID(context)
        guard try await self.schedules.cancel(id, appID: caller.app.id, at: self.now(), by: self.auth.origin(of: caller, request, context)) else {
            throw AirshipError.notFound("Schedule")
        }
        return Response(status: .noContent)
    }

    private func pause(_ request: Request, _ context: some RequestContext, _ paused: Bool) async throws -> Response {
        let caller = try await self.auth.master(request, .push)
        let id = try Self.scheduleID(context)
        let origin = self.auth.origin(of: caller, request, context)
        guard try await self.schedules.setPaused(id, paused, appID: caller.app.id, now: self.now(), by: origin) else {
            throw AirshipError.notFound("Schedule")
        }
        return Response(status: .noContent)
    }

    /// A page of the app's schedules in creation order; `next_page` (and `Link`) is the next page's absolute URL.
    private func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let limit = try Paging.limit(
            request.uri.queryParameters["limit"].map(String.init), maximum: Self.maximumPage, fallback: Self.defaultPage)
        let page = try await self.schedules.list(appID: caller.app.id, limit: limit, start: try Paging.start(request, "schedule"))
        return Paging.answer(
            [
                .init("ok", .bool(true)), .init("count", .integer(Int64(page.records.count))),
                .init("schedules", .array(page.records.map { Self.json($0, url: self.url(of: $0.scheduleID, request)) })),
            ],
            next: page.next, path: "/api/schedules", limit: limit, base: self.publicURL.base(for: request))
    }

    /// The request's schedules, each push checked as `POST /api/push` checks it (``PushPreparer``).
    private func checked(_ json: RawJSON, appID: Int64) async throws -> [ScheduledPush] {
        let schedules: [ScheduledPush]
        do {
            schedules = try ScheduledPush.schedules(in: json, now: self.now())
        } catch {
            throw AirshipError.invalid(error)
        }
        _ = try await self.preparer.prepare(schedules: schedules, paths: schedules.indices.map { json.isArray ? "[\($0)]." : "" }, appID: appID)
        return schedules
    }

    private func url(of id: UUID, _ request: Request) -> String {
        "\(self.publicURL.base(for: request))/api/schedules/\(id.lowercaseString)"
    }

    private static func scheduleID(_ context: some RequestContext) throws -> UUID {
        guard let text = context.parameters.get("schedule"), let id = UUID(parsing: text) else { throw AirshipError.notFound("Schedule") }
        return id
    }

    /// A schedule as Airship answers it: `url`, `schedule`, `name`, `push` (with its `device_types`), `push_ids`; and
    /// Blimp's `next_occurrence`, `paused` and `last_error` beside them.
    static func json(_ record: ScheduleStore.Record, url: String) -> RawJSON {
        var members: [RawJSON.Member] = [
            .init("url", .string(url)),
            .init("schedule", record.schedule.scheduleJSON),
        ]
        if let name = record.schedule.name { members.append(.init("name", .string(name))) }
        members.append(.init("push", record.schedule.push.request))
        members.append(.init("push_ids", .array(record.pushIDs.map { .string($0.lowercaseString) })))
        members.append(.init("paused", .bool(record.paused)))
        members.append(.init("next_occurrence", record.nextOccurrence.map { .string(AirshipDate.format($0)) } ?? .null))
        if let error = record.lastError {
            members.append(.init("last_error", .string(error)))
            if let at = record.lastErrorAt { members.append(.init("last_error_at", .string(AirshipDate.format(at)))) }
        }
        return .object(members)
    }
}
