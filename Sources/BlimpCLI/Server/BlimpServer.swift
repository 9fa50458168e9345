import BlimpAPI
import BlimpConsole
import BlimpStore
import Hummingbird
import Logging
import NIOCore
import PostgresNIO

/// The HTTP server `blimp api` and `blimp dev` run, and the API tests drive: the API and, under `/console`, the
/// console, on one router over one set of ``Stores``. So the process has one `PushIntake` and one `ChannelStore` (one
/// of each coalescer), and the console's stores honour the API's settings (prepared statements, the clock).
public enum BlimpServer {
    /// The router with every route: the API's (behind its middleware) and the console's.
    ///
    /// - Parameters:
    ///   - adminToken: The deployment admin's token for the console (`BLIMP_ADMIN_TOKEN`); `nil`: no admin sign-in.
    ///   - masterSecretSignIn: Whether apps' master secrets sign in to the console (`BLIMP_CONSOLE_MASTER_SECRET_SIGN_IN`).
    ///   - preparedStatements: Whether the writes every device makes are prepared once per connection; not through a
    ///     transaction pooler, where the next statement may meet another server connection.
    public static func buildRouter(
        database: Database,
        configuration: APIConfiguration,
        adminToken: String? = nil,
        masterSecretSignIn: Bool = true,
        preparedStatements: Bool = true,
        logger: Logger
    ) -> Router<APIRequestContext> {
        let stores = Stores(
            client: database, logger: logger, preparedStatements: preparedStatements, retention: configuration.retention, now: configuration.now)
        let router = APIServer.buildRouter(stores: stores, configuration: configuration)
        let console = ConsoleConfiguration(
            adminToken: adminToken, masterSecretSignIn: masterSecretSignIn, secureCookies: configuration.publicURL?.lowercased().hasPrefix("https://") ?? false,
            clientAddress: { [limits = configuration.limits] in limits.clientAddress($0, $1) })
        Console(configuration: console, stores: stores, serverKey: configuration.serverKey, now: configuration.now)
            .addRoutes(to: router)
        return router
    }

    /// The application listening on `host`:`port`, serving
    /// ``buildRouter(database:configuration:adminToken:masterSecretSignIn:preparedStatements:logger:)``. It is a `Service`; the caller
    /// runs it in a `ServiceGroup` after the `Database` it uses.
    public static func buildApplication(
        host: String,
        port: Int,
        database: Database,
        configuration: APIConfiguration,
        adminToken: String?,
        masterSecretSignIn: Bool,
        preparedStatements: Bool,
        logger: Logger
    ) -> Application<RouterResponder<APIRequestContext>> {
        Application(
            router: Self.buildRouter(
                database: database, configuration: configuration, adminToken: adminToken, masterSecretSignIn: masterSecretSignIn,
                preparedStatements: preparedStatements, logger: logger),
            server: .http1(configuration: .init(idleTimeout: TimeAmount(configuration.limits.idleTimeout))),
            configuration: .init(address: .hostname(host, port: port), serverName: "blimp"),
            logger: logger
        )
    }
}
