import BlimpCore
import BlimpStore
import Foundation
import HTTPTypes
import Hummingbird

/// The Push API (master secret or an API token; https://docs.airship.com/developer/rest-api/ua/operations/push/): `POST /api/push` queues pushes and
/// answers 202 once they are committed; `POST /api/push/validate` checks them and queues nothing. Reports
/// (`GET /api/pushes/{id}`, `GET /api/pushes`) and `POST /api/pushes/{id}/cancel` and `/retry` are a Blimp extension.
struct PushController: Sendable {
    let auth: Authenticator
    let intake: PushIntake
    let reports: PushReports
    let control: PushControl
    let preparer: PushPreparer
    let publicURL: PublicURL

    /// The largest request body, as Airship's.
    static let maximumBody = 5 * 1024 * 1024
    /// The longest page of reports, and the default one.
    static let maximumPage = 1000
    static let defaultPage = 100
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("push") { request, context in try await self.send(request, context) }
        router.post("push/validate") { request, _ in try await self.validate(request) }
        router.get("pushes/:push") { request, context in try await self.report(request, context) }
        router.get("pushes") { request, _ in try await self.list(request) }
        router.post("pushes/:push/cancel") { request, context in try await self.change(request, context, "cancelled", self.control.cancel) }
        router.post("pushes/:push/retry") { request, context in try await self.change(request, context, "retried", self.control.retry) }
    }

    func send(_ request: Request, _ context: some RequestContext) async throws -> Response {
        do {
            return try await self.queue(request, context)
        } catch {
            PushRefusals.count(error)
            throw error
        }
    }

    /// Queues the request's pushes: 202 once committed.
    private func queue(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request, .push)
        let key = try Self.idempotencyKey(of: request)
        let prepared = try await self.pushes(in: request, appID: caller.app.id)
        let submission = PushSubmission(
            appID: caller.app.id, prepared: prepared, idempotencyKey: key, origin: self.auth.origin(of: caller, request, context))
        switch try await self.intake.accept(submission) {
        case .accepted(let operationID, let pushIDs):
            return AirshipJSON.response(status: .accepted, json: Self.accepted(operationID: operationID, pushIDs: pushIDs))
        }
    }

    func validate(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request, .push)
        _ = try await self.pushes(in: request, appID: caller.app.id)
        return AirshipJSON.ok()
    }

    /// The request's pushes, prepared as they will be queued (``PushPreparer``: checked against the app's Live Activity
    /// types and live activity channels, their payloads built and sized, starts' endings scheduled); a refusal's path
    /// starts with the push's index when they came as an array.
    private func pushes(in request: Request, appID: Int64) async throws -> [PreparedPush] {
        let json = try await AirshipJSON.json(from: request, upTo: Self.maximumBody)
        let pushes = try Push.pushes(in: json)
        return try await self.preparer.prepare(pushes, paths: pushes.indices.map { json.isArray ? "[\($0)]." : "" }, appID: appID)
    }

    func report(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        return try await self.answer(try Self.pushID(context), appID: caller.app.id)
    }

    /// Cancels or retries the push, then answers its report; 409 when its state forbids it.
    private func change(
        _ request: Request, _ context: some RequestContext, _ done: String,
        _ change: (UUID, Int64, AuditOrigin) async throws(StoreError) -> PushControl.Outcome
    ) async throws -> Response {
        let caller = try await self.auth.master(request)
        let pushID = try Self.pushID(context)
        let origin = self.auth.origin(of: caller, request, context)
        let outcome = try await self.whenMissing(pushID, appID: caller.app.id) { try await change(pushID, caller.app.id, origin) }
        if case .notAllowed(let state) = outcome {
            throw AirshipError(.conflict, "The push cannot be \(done) now.", details: .init(error: "the push is \(state.rawValue)", path: nil))
        }
        return try await self.answer(pushID, appID: caller.app.id)
    }

    private static func pushID(_ context: some RequestContext) throws -> UUID {
        guard let text = context.parameters.get("push"), let pushID = UUID(parsing: text) else { throw AirshipError.notFound("Push") }
        return pushID
    }

    private func answer(_ pushID: UUID, appID: Int64) async throws -> Response {
        let report = try await self.whenMissing(pushID, appID: appID) { try await self.reports.report(pushID, appID: appID) }
        return AirshipJSON.response(json: RawJSON.object([.init("ok", .bool(true)), .init("push", report.json)]).text)
    }

    /// Runs `body`, answering a push the app does not have with 404: that it expired when its id tells that its report
    /// aged out (a ``UUIDv7`` older than the app's push retention), else not found.
    private func whenMissing<T>(_ pushID: UUID, appID: Int64, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch StoreError.notFound {
            guard let retention = try await self.reports.expiredRetention(of: pushID, appID: appID) else { throw AirshipError.notFound("Push") }
            throw AirshipError.expired("Push \(pushID.lowercaseString)", keptFor: retention)
        }
    }

    /// The app's pushes, newest first, paged like channels: `next_page` (and `Link`) is the next page's absolute URL.
    func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let limit = try Paging.limit(
            request.uri.queryParameters["limit"].map(String.init), maximum: Self.maximumPage, fallback: Self.defaultPage)
        let page = try await self.reports.list(appID: caller.app.id, limit: limit, start: try Paging.start(request, "push"))
        return Paging.answer(
            [.init("ok", .bool(true)), .init("pushes", .array(page.reports.map(\.json)))], next: page.next, path: "/api/pushes", limit: limit,
            base: self.publicURL.base(for: request))
    }

    /// The `Idempotency-Key` header: 1 to 255 printable ASCII characters.
    private static func idempotencyKey(of request: Request) throws -> String? {
        guard let key = request.headers[Self.idempotencyKey] else { return nil }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw AirshipError(.badRequest, "The Idempotency-Key header is not valid.",
                               details: .init(error: "an idempotency key is 1 to 255 printable ASCII characters"))
        }
        return key
    }

    /// Airship's answer to an accepted push request.
    static func accepted(operationID: UUID, pushIDs: [UUID]) -> String {
        RawJSON.object([
            .init("ok", .bool(true)),
            .init("operation_id", .string(operationID.lowercaseString)),
            .init("push_ids", .array(pushIDs.map { .string($0.lowercaseString) })),
            .init("message_ids", .array([])),
            .init("content_urls", .array([])),
            .init("localized_ids", .array([])),
        ]).text
    }
}
