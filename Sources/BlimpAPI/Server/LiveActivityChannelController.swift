import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// Live activity channels (master secret; a Blimp extension): iOS 18 broadcast channels backing Live Activity names,
/// created and deleted through APNs's channel management with the app's own key (see
/// https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns). `POST /api/live_activity_channels` creates one (201), `GET` lists them,
/// `DELETE /api/live_activity_channels/{name}` deletes the name's channel at APNs, then on record. Never Airship
/// channels, which are devices.
struct LiveActivityChannelController: Sendable {
    let auth: Authenticator
    let channels: LiveActivityChannelStore
    let apps: AppStore
    let serverKey: ServerKey
    /// APNs's channel management; `nil` when the process has none (creating and deleting then answer 503).
    let apns: (any APNsBroadcastChannels)?
    let now: @Sendable () -> Date

    func addRoutes(to router: RouterGroup<some RequestContext>) {
        router.post("live_activity_channels") { request, context in try await self.create(request, context) }
        router.get("live_activity_channels") { request, _ in try await self.list(request) }
        router.delete("live_activity_channels/:name") { request, context in try await self.delete(request, context) }
    }

    /// Creates the name's channel at APNs and records it: 201 with the channel; 409 when the name has one.
    func create(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        let body = try LiveActivityChannelRequest(json: try await AirshipJSON.json(from: request, upTo: context.maxUploadSize))
        if let existing = try await self.channels.live(name: body.name, appID: caller.app.id) { throw Self.duplicate(existing) }
        let (apns, delivery) = try await self.management(for: caller)
        let channelID: String
        do {
            channelID = try await apns.create(
                storagePolicy: body.storagePolicy, bundleID: caller.app.bundleID, key: delivery, environment: caller.app.apnsEnvironment)
        } catch {
            throw Self.airshipError(error)
        }
        let channel = LiveActivityChannel(name: body.name, apnsChannelID: channelID, storagePolicy: body.storagePolicy, createdAt: self.now())
        do {
            try await self.channels.insert(channel, appID: caller.app.id, by: self.auth.origin(of: caller, request, context))
        } catch {
            // Not on record (another request created the name's channel meanwhile, or the database failed): not kept
            // at APNs either.
            try? await apns.delete(channelID, bundleID: caller.app.bundleID, key: delivery, environment: caller.app.apnsEnvironment)
            guard case .duplicate = error else { throw error }
            throw Self.duplicate(try await self.channels.live(name: body.name, appID: caller.app.id) ?? channel)
        }
        return AirshipJSON.response(status: .created, json: Self.answer("live_activity_channel", channel.json))
    }

    /// The app's live channels by name; with `?include_deleted=true`, the deleted ones too.
    func list(_ request: Request) async throws -> Response {
        let caller = try await self.auth.master(request)
        let includingDeleted = request.uri.queryParameters["include_deleted"].map { $0 == "true" } ?? false
        let channels = try await self.channels.list(appID: caller.app.id, includingDeleted: includingDeleted)
        return AirshipJSON.response(json: Self.answer("live_activity_channels", .array(channels.map(\.json))))
    }

    /// Deletes the name's live channel at APNs (one APNs no longer knows counts as deleted), then on record; for a name
    /// whose channel APNs deleted, acknowledges that, so the name takes pushes again. 404 when it has neither.
    func delete(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let caller = try await self.auth.master(request)
        guard let name = context.parameters.get("name") else { throw AirshipError.notFound("Live activity channel") }
        guard var channel = try await self.channels.live(name: name, appID: caller.app.id) else {
            guard let acknowledged = try await self.channels.acknowledgeDeletedByAPNs(name: name, appID: caller.app.id, at: self.now()) else {
                throw AirshipError.notFound("Live activity channel")
            }
            return AirshipJSON.response(json: Self.answer("live_activity_channel", acknowledged.json))
        }
        let (apns, key) = try await self.management(for: caller)
        do {
            try await apns.delete(channel.apnsChannelID, bundleID: caller.app.bundleID, key: key, environment: caller.app.apnsEnvironment)
        } catch .rejected(_, let reason?) where APNsReason.unknownChannel.contains(reason) {
            // Already gone at APNs: deleting it on record is all that is left.
        } catch .rejected(404, _) {
            // Observed for a channel already deleted (docs/references.md#broadcast-channels): the same.
        } catch {
            throw Self.airshipError(error)
        }
        let deletedAt = self.now()
        (channel.deletedAt, channel.deletion) = (deletedAt, .admin)
        try await self.channels.markDeleted(
            channel.apnsChannelID, appID: caller.app.id, reason: .admin, at: deletedAt, by: self.auth.origin(of: caller, request, context))
        return AirshipJSON.response(json: Self.answer("live_activity_channel", channel.json))
    }

    /// The channel-management client and the app's key; 503 without a client.
    private func management(for caller: Caller) async throws -> (any APNsBroadcastChannels, APNsSigningKey) {
        guard let apns = self.apns else {
            throw AirshipError.unavailable("this API process has no APNs channel-management client", retryAfter: .seconds(60))
        }
        return (apns, try await self.apps.delivery(appID: caller.app.id, serverKey: self.serverKey).key)
    }

    /// APNs's refusal in Airship's shape: the channel limit or a missing capability a 400 that says so, anything else
    /// APNs refused a 502 naming its answer, no answer a 503.
    static func airshipError(_ error: APNsBroadcastError) -> AirshipError {
        switch error {
        case .rejected(_, .cannotCreateChannelConfig?):
            AirshipError(
                .badRequest, "The app has reached APNs's limit of broadcast channels.",
                details: .init(
                    error: """
                        APNs answered CannotCreateChannelConfig: the app has as many live activity channels as Apple allows per app and \
                        environment (10,000 at the time of writing); delete one (DELETE /api/live_activity_channels/{name}) first
                        """))
        case .rejected(_, .featureNotEnabled?):
            AirshipError(
                .badRequest, "The app cannot use broadcast channels.",
                details: .init(error: "APNs answered FeatureNotEnabled: enable the Broadcast capability of the App ID on developer.apple.com"))
        case .rejected:
            AirshipError(.badGateway, "APNs refused the channel-management request.", details: .init(error: error.description))
        case .noResponse:
            AirshipError.unavailable("APNs did not answer the channel-management request; try again shortly", retryAfter: .seconds(5))
        }
    }

    private static func duplicate(_ existing: LiveActivityChannel) -> AirshipError {
        AirshipError(
            .conflict, "The Live Activity name already has a live activity channel.",
            details: .init(
                error: "'\(existing.name)' is backed by live activity channel \(existing.apnsChannelID); delete it first to replace it",
                path: "name"))
    }

    private static func answer(_ key: String, _ value: RawJSON) -> String {
        RawJSON.object([.init("ok", .bool(true)), .init(key, value)]).text
    }
}
