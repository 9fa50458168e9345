import BlimpConsole
import BlimpCore
import BlimpStore
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// What the API needs besides its database.
public struct APIConfiguration: Sendable {
    /// The deployment's key (with the previous one during a rotation): it opens app secrets and signs the tokens
    /// Blimp issues.
    public var serverKey: ServerKey
    /// Where devices and clients reach the API (`BLIMP_PUBLIC_URL`); `nil` uses each request's `Host`.
    public var publicURL: String?
    /// Rate limits and timeouts.
    public var limits: APILimits
    /// The deployment admin's token for the console (`BLIMP_ADMIN_TOKEN`); `nil`: apps sign in only.
    public var adminToken: String?
    /// Whether the writes every device makes are prepared once per connection; not through a transaction pooler, where
    /// the next statement may meet another server connection. Defaults to `true`.
    public var preparedStatements = true
    /// The clock; tests inject their own.
    public var now: @Sendable () -> Date

    public init(
        serverKey: ServerKey, publicURL: String? = nil, limits: APILimits = APILimits(), adminToken: String? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.serverKey = serverKey
        self.publicURL = publicURL
        self.limits = limits
        self.adminToken = adminToken
        self.now = now
    }
}

/// Builds the HTTP API: the router with every route, and the Hummingbird application that serves it.
///
/// The application is a `Service`; the caller runs it in a `ServiceGroup` after the `PostgresClient` it uses.
public enum APIServer {
    /// The router with every route: health, the device API the Airship SDK calls, the server API, the Push API and the
    /// console.
    public static func buildRouter(
        database: PostgresClient,
        configuration: APIConfiguration,
        logger: Logger
    ) -> Router<APIRequestContext> {
        let channels = ChannelStore(client: database, logger: logger, preparedStatements: configuration.preparedStatements, now: configuration.now)
        let namedUsers = NamedUserStore(channels: channels)
        let tokenKey = IssuedTokenKey(serverKey: configuration.serverKey)
        let limits = RequestLimits(configuration.limits)
        let auth = Authenticator(
            apps: AppDirectory(store: AppStore(client: database, logger: logger), serverKey: configuration.serverKey),
            nonces: NonceLedger(client: database, logger: logger),
            tokenKey: tokenKey,
            limits: limits,
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
        HealthController(database: database).addRoutes(to: router)
        AnalyticsController().addRoutes(to: router)
        let api = router.group("api").add(middleware: AirshipVersionMiddleware())
        // Device API (the Airship iOS SDK).
        RemoteDataController(auth: auth, publicURL: publicURL).addRoutes(to: api)
        ChannelRegistrationController(auth: auth, channels: channels).addRoutes(to: api)
        DeviceAuthController(auth: auth, tokenKey: tokenKey).addRoutes(to: api)
        ContactController(
            auth: auth, namedUsers: namedUsers, tokenKey: tokenKey,
            contactIDs: ContactIDSource(secrets: DeploymentSecrets(client: database, logger: logger), serverKey: configuration.serverKey)
        ).addRoutes(to: api)
        // Server API (the master secret).
        ChannelController(auth: auth, channels: channels, publicURL: publicURL).addRoutes(to: api)
        NamedUserController(auth: auth, namedUsers: namedUsers, publicURL: publicURL).addRoutes(to: api)
        PushController(
            auth: auth,
            intake: PushIntake(client: database, logger: logger, now: configuration.now),
            reports: PushReports(client: database, logger: logger),
            control: PushControl(client: database, logger: logger),
            publicURL: publicURL,
            now: configuration.now
        ).addRoutes(to: api)
        Console(
            configuration: ConsoleConfiguration(
                adminToken: configuration.adminToken, secureCookies: configuration.publicURL?.lowercased().hasPrefix("https://") ?? false,
                clientAddress: { limits.clientAddress($0, $1) }),
            database: database, serverKey: configuration.serverKey, logger: logger, now: configuration.now
        ).addRoutes(to: router)
        return router
    }

    /// The application listening on `host`:`port`.
    public static func buildApplication(
        host: String,
        port: Int,
        database: PostgresClient,
        configuration: APIConfiguration,
        logger: Logger
    ) -> Application<RouterResponder<APIRequestContext>> {
        Application(
            router: Self.buildRouter(database: database, configuration: configuration, logger: logger),
            server: .http1(configuration: .init(idleTimeout: TimeAmount(configuration.limits.idleTimeout))),
            configuration: .init(address: .hostname(host, port: port), serverName: "blimp"),
            logger: logger
        )
    }
}
