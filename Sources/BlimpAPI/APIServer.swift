import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// What the API needs besides its stores.
public struct APIConfiguration: Sendable {
    /// The deployment's key (with the previous one during a rotation): it opens app secrets and signs the tokens
    /// Blimp issues.
    public var serverKey: ServerKey
    /// Where devices and clients reach the API (`BLIMP_PUBLIC_URL`); `nil` uses each request's `Host`.
    public var publicURL: String?
    /// Rate limits and timeouts.
    public var limits: APILimits
    /// The deployment's retentions: a push id not found whose report aged out is answered as expired.
    public var retention: RetentionPolicy
    /// APNs's channel management, for live activity channels; `nil`: creating or deleting one answers 503. The API
    /// sends no pushes.
    public var broadcastChannels: (any APNsBroadcastChannels)?
    /// Whether webhook endpoints may be plain `http` and resolve to private, loopback or link-local addresses
    /// (`BLIMP_WEBHOOKS_ALLOW_PRIVATE`: for tests and closed networks).
    public var webhooksAllowPrivate = false
    /// The clock; tests inject their own.
    public var now: @Sendable () -> Date

    public init(
        serverKey: ServerKey, publicURL: String? = nil, limits: APILimits = APILimits(), retention: RetentionPolicy = RetentionPolicy(),
        broadcastChannels: (any APNsBroadcastChannels)? = nil, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.serverKey = serverKey
        self.publicURL = publicURL
        self.limits = limits
        self.retention = retention
        self.broadcastChannels = broadcastChannels
        self.now = now
    }
}

/// Builds the HTTP API's router. The composition root (BlimpCLI's `BlimpServer`) serves it, with the console beside
/// it on the same stores.
public enum APIServer {
    /// The router with the API's middleware and every route of the API: health, the device API the Airship SDK calls,
    /// the server API and the Push API. Routes added to it later (the console's) pass through the same middleware.
    public static func buildRouter(stores: Stores, configuration: APIConfiguration) -> Router<APIRequestContext> {
        let tokenKey = IssuedTokenKey(serverKey: configuration.serverKey)
        let auth = Authenticator(
            apps: AppDirectory(store: stores.apps, serverKey: configuration.serverKey),
            nonces: stores.nonces,
            tokenKey: tokenKey,
            limits: RequestLimits(configuration.limits, buckets: stores.rateBuckets),
            now: configuration.now
        )
        let publicURL = PublicURL(configuration.publicURL)

        let router = Router(context: APIRequestContext.self)
        // Outermost, so that it counts every answer as sent, errors included.
        router.middlewares.add(MetricsMiddleware())
        router.middlewares.add(TracingMiddleware())
        router.middlewares.add(AppKeyLogMiddleware())
        router.middlewares.add(LogRequestsMiddleware(.debug))
        router.middlewares.add(AirshipErrorMiddleware())
        router.middlewares.add(RequestDeadlineMiddleware(timeout: configuration.limits.requestTimeout))
        HealthController(database: stores.client).addRoutes(to: router)
        AnalyticsController().addRoutes(to: router)
        let api = router.group("api").add(middleware: AirshipVersionMiddleware())
        api.add(middleware: DatabaseDownMiddleware(database: stores.client))
        // Device API (the Airship iOS SDK).
        RemoteDataController(auth: auth, publicURL: publicURL).addRoutes(to: api)
        ChannelRegistrationController(auth: auth, channels: stores.channels).addRoutes(to: api)
        DeviceAuthController(auth: auth, tokenKey: tokenKey).addRoutes(to: api)
        ContactController(
            auth: auth, namedUsers: stores.namedUsers, tokenKey: tokenKey,
            contactIDs: ContactIDSource(secrets: stores.secrets, serverKey: configuration.serverKey)
        ).addRoutes(to: api)
        // Server API (the master secret).
        ChannelController(auth: auth, channels: stores.channels, publicURL: publicURL).addRoutes(to: api)
        NamedUserController(auth: auth, namedUsers: stores.namedUsers, publicURL: publicURL).addRoutes(to: api)
        LiveActivityController(auth: auth, channels: stores.channels, publicURL: publicURL).addRoutes(to: api)
        let preparer = PushPreparer(
            inputs: stores.preparationInputs, now: configuration.now)
        PushController(
            auth: auth, intake: stores.intake, reports: stores.reports, control: stores.control, preparer: preparer,
            publicURL: publicURL
        ).addRoutes(to: api)
        ScheduleController(
            auth: auth, schedules: stores.schedules, preparer: preparer, publicURL: publicURL, now: configuration.now
        ).addRoutes(to: api)
        LiveActivityTypeController(auth: auth, types: stores.liveActivityTypes, now: configuration.now)
            .addRoutes(to: api)
        LiveActivityChannelController(
            auth: auth, channels: stores.liveActivityChannels, apps: stores.apps, serverKey: configuration.serverKey,
            apns: configuration.broadcastChannels, now: configuration.now
        ).addRoutes(to: api)
        AuditController(auth: auth, audit: stores.audit, publicURL: publicURL).addRoutes(to: api)
        EventStreamController(auth: auth, log: stores.events, slots: StreamSlots()).addRoutes(to: api)
        WebhookController(
            auth: auth, webhooks: stores.webhooks, serverKey: configuration.serverKey, allowsPrivate: configuration.webhooksAllowPrivate,
            now: configuration.now
        ).addRoutes(to: api)
        return router
    }
}
