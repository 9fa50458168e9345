import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// Webhook endpoints (master secret or an API token; a Blimp extension): `POST /api/webhooks` creates one (201, its
/// signing secret shown only then), `GET` lists them, `DELETE /api/webhooks/{id}` removes one,
/// `POST /api/webhooks/{id}/enable` turns a disabled one back on, and `POST /api/webhooks/{id}/rotate` issues a new
/// secret (the old one signs beside it for 24 hours). Workers deliver (`WebhookSender`).
struct WebhookController: Sendable {
    let auth: Authenticator
    let webhooks: WebhookStore
    let serverKey: ServerKey
    /// Whether endpoints may be plain `http` and resolve to private addresses (`BLIMP_WEBHOOKS_ALLOW_PRIVATE`).
    let allowsPrivate: Bool
    let now: @Sendable () -> Date

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("webhooks") { request, context in try await self.create(request, context) }
        router.get("webhooks") { request, _ in try await self.list(request) }
        router.delete("webhooks/:id") { request, context in try await self.delete(request, context) }
        router.post("webhooks/:id/enable") { request, context in try await self.enable(request, context) }
        router.post("webhooks/:id/rotate") { request, context in try await self.rotate(request, context) }
    }

    func create(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let body: WebhookEndpointRequest
        do {
            body = try WebhookEndpointRequest(
                parsing: try await AirshipJSON.json(from: request, upTo: context.maxUploadSize), allowsPlainHTTP: self.allowsPrivate)
        } catch let invalid as InvalidField {
            throw AirshipError.invalid(invalid)
        }
        if !self.allowsPrivate, let refusal = await EndpointResolution.refusal(of: body.url.absoluteString) {
            throw AirshipError.invalid(InvalidField("url", "is refused: \(refusal)"))
        }
        let secret = WebhookSecret.make()
        let created = try await self.webhooks.create(
            appID: caller.app.id, url: body.url.absoluteString, types: body.types.map { $0.map(\.rawValue).sorted() }, secret: secret,
            serverKey: self.serverKey, now: self.now(), by: self.auth.origin(of: caller, request, context))
        switch created {
        case .success(let endpoint):
            return AirshipJSON.response(status: .created, json: Self.answer(endpoint, secret: secret))
        case .failure(.tooMany):
            throw AirshipError(
                .badRequest, "The app has as many webhooks as it may.",
                details: .init(error: "an app has at most \(WebhookStore.maximumPerApp) webhooks: delete one first"))
        }
    }

    func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let endpoints = try await self.webhooks.list(appID: caller.app.id)
        return AirshipJSON.response(json: RawJSON.object([.init("ok", .bool(true)), .init("webhooks", .array(endpoints.map(Self.json)))]).text)
    }

    func delete(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        guard try await self.webhooks.delete(appID: caller.app.id, id: try Self.id(context), now: self.now(), by: self.auth.origin(of: caller, request, context))
        else { throw AirshipError.notFound("Webhook") }
        return Response(status: .noContent)
    }

    func enable(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        guard
            let endpoint = try await self.webhooks.enable(
                appID: caller.app.id, id: try Self.id(context), now: self.now(), by: self.auth.origin(of: caller, request, context))
        else {
            throw AirshipError.notFound("Webhook")
        }
        return AirshipJSON.response(json: Self.answer(endpoint, secret: nil))
    }

    func rotate(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let id = try Self.id(context)
        let secret = WebhookSecret.make()
        guard
            try await self.webhooks.rotate(
                appID: caller.app.id, id: id, to: secret, serverKey: self.serverKey, now: self.now(), by: self.auth.origin(of: caller, request, context)),
            let endpoint = try await self.webhooks.list(appID: caller.app.id).first(where: { $0.id == id })
        else { throw AirshipError.notFound("Webhook") }
        return AirshipJSON.response(json: Self.answer(endpoint, secret: secret))
    }

    private static func id(_ context: some RequestContext) throws -> String {
        guard let id = context.parameters.get("id"), let uuid = UUID(uuidString: id) else { throw AirshipError.notFound("Webhook") }
        return uuid.lowercaseString
    }

    /// `{"ok": true, "webhook": {…}}`, with the secret when it was just issued.
    private static func answer(_ endpoint: WebhookStore.Endpoint, secret: WebhookSecret?) -> String {
        var webhook = Self.json(endpoint)
        if let secret, case .object(var members) = webhook {
            members.append(.init("secret", .string(secret.text)))
            webhook = .object(members)
        }
        return RawJSON.object([.init("ok", .bool(true)), .init("webhook", webhook)]).text
    }

    /// An endpoint as the API shows it: never its secret.
    static func json(_ endpoint: WebhookStore.Endpoint) -> RawJSON {
        func date(_ date: Date?) -> RawJSON { date.map { .string(AirshipDate.format($0)) } ?? .null }
        let attempts: RawJSON = (try? RawJSONParser.parse(Array(endpoint.recentAttempts.utf8))) ?? .array([])
        var members: [RawJSON.Member] = [
            .init("id", .string(endpoint.id)),
            .init("url", .string(endpoint.url)),
            .init("types", endpoint.types.map { .array($0.map(RawJSON.string)) } ?? .null),
            .init("enabled", .bool(endpoint.enabled)),
            .init("disabled_reason", endpoint.disabledReason.map(RawJSON.string) ?? .null),
            .init("created_at", date(endpoint.createdAt)),
            .init("delivered_events", .integer(endpoint.deliveredEvents)),
            .init("pending_events", .integer(Int64(endpoint.pendingEvents ?? 0))),
            .init("failed_attempts", .integer(Int64(endpoint.attempts))),
            .init("failing_since", date(endpoint.failingSince)),
            .init("last_attempt_at", date(endpoint.lastAttemptAt)),
            .init("last_status", endpoint.lastStatus.map { .integer(Int64($0)) } ?? .null),
            .init("last_error", endpoint.lastError.map(RawJSON.string) ?? .null),
            .init("recent_attempts", attempts),
        ]
        if let backlog = endpoint.backlog { members.append(.init("backlog_events", .integer(Int64(backlog)))) }
        return .object(members)
    }
}
