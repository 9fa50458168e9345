import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The device API the Airship iOS SDK registers with (docs/references.md#airship-ios-sdk-requests):
/// `POST /api/channels` creates a channel (or finds the one its push address has), `PUT /api/channels/{id}` merges
/// an update, and `PUT /api/channels/sdk/batch/{id}?platform=ios` applies tags, attributes and Live Activity tokens.
struct ChannelRegistrationController: Sendable {
    let auth: Authenticator
    let channels: ChannelStore

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("channels") { request, context in try await self.create(request, context) }
        router.put("channels/:channel") { request, context in try await self.update(request, context) }
        router.put("channels/sdk/batch/:channel") { request, context in try await self.batch(request, context) }
    }

    /// 201 with the new channel's id, or 200 with the id of the channel that already has this push address.
    func create(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.app(request)
        try await self.auth.limits.admitChannelCreation(appID: caller.app.id, request: request, context: context)
        let channel = try await Self.channel(in: request, context)
        guard channel.deviceType != nil else {
            throw AirshipError.invalid(InvalidField("channel.device_type", "device_type is required"))
        }
        let registration = try Self.check(channel)
        let (channelID, created) = try await self.channels.register(registration, appID: caller.app.id)
        context.logger.debug("channel registered", metadata: ["channel": "\(channelID)", "created": "\(created)"])
        let id = channelID.lowercaseString
        return AirshipJSON.response(
            status: created ? .created : .ok,
            headers: [.location: "/api/channels/\(id)"],
            json: Self.answer(channelID: channelID, skipped: registration.skipped, context)
        )
    }

    /// Merges an update. An unknown channel is 409, which makes the SDK register anew.
    func update(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let channelID = try ChannelID.parameter(context)
        let caller = try await self.auth.channel(request, channelID)
        let registration = try Self.check(try await Self.channel(in: request, context))
        try await AirshipError.whenMissing(AirshipError(.conflict, "The channel is not registered; register it again")) {
            try await self.channels.update(registration, channelID: channelID, appID: caller.app.id)
        }
        return AirshipJSON.response(json: Self.answer(channelID: channelID, skipped: registration.skipped, context))
    }

    /// `{"channel_id": …, "ok": true}`, with the fields left out named in `skipped` (and logged).
    private static func answer(channelID: UUID, skipped: [InvalidField], _ context: some RequestContext) -> String {
        let id = channelID.lowercaseString
        guard !skipped.isEmpty else { return #"{"channel_id":"\#(id)","ok":true}"# }
        context.logger.notice("registration fields skipped", metadata: ["channel": "\(id)", "first": "\(skipped[0])"])
        return RawJSON.object([
            .init("channel_id", .string(id)), .init("ok", .bool(true)), .init("skipped", Self.skippedJSON(skipped, within: "channel")),
        ]).text
    }

    /// `[{"path": …, "error": …}, …]`.
    private static func skippedJSON(_ skipped: [InvalidField], within prefix: String? = nil) -> RawJSON {
        .array(skipped.map { field in
            let path = prefix.map { field.within($0).path } ?? field.path
            return .object([.init("path", .string(path)), .init("error", .string(field.message))])
        })
    }

    func batch(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let channelID = try ChannelID.parameter(context)
        let platform = request.uri.queryParameters["platform"]
        guard platform == nil || platform == "ios" else {
            throw AirshipError.invalid(InvalidField("platform", "Blimp serves iOS channels only (platform=ios)"))
        }
        let caller = try await self.auth.channel(request, channelID)
        let json = try await AirshipJSON.json(from: request, upTo: context.maxUploadSize)
        let batch = try ChannelBatch(json: json).checked()
        try await AirshipError.whenMissing(.notFound("Channel")) {
            try await self.channels.apply(batch, channelID: channelID, appID: caller.app.id)
        }
        guard let first = batch.skipped.first else { return AirshipJSON.ok() }
        // 200 all the same: the SDK would drop the whole batch on a 4xx. The skipped entries are named in the answer.
        context.logger.notice(
            "batch entries skipped",
            metadata: ["channel": "\(channelID.lowercaseString)", "skipped": "\(batch.skipped.count)", "first": "\(first)"])
        return AirshipJSON.response(json: RawJSON.object([.init("ok", .bool(true)), .init("skipped", Self.skippedJSON(batch.skipped))]).text)
    }

    /// The `channel` of `{"channel": {…}, "identity_hints": {…}}`; the hints are not used.
    private static func channel(in request: Request, _ context: some RequestContext) async throws -> ChannelRegistration {
        let json = try await AirshipJSON.json(from: request, upTo: context.maxUploadSize)
        let body = try JSONObjectReader(json, at: "", allowed: nil)
        return try ChannelRegistration(json: try body.required("channel", body.object), at: "channel")
    }

    private static func check(_ channel: ChannelRegistration) throws -> CheckedChannelRegistration {
        do {
            return try channel.checked()
        } catch {
            throw AirshipError.invalid(error.within("channel"))
        }
    }
}

/// A channel id in a path or body: a UUID, else 404 (a malformed id names no channel).
enum ChannelID {
    static func parameter(_ context: some RequestContext) throws -> UUID {
        guard let text = context.parameters.get("channel"), let id = UUID(parsing: text) else {
            throw AirshipError.notFound("Channel")
        }
        return id
    }
}
