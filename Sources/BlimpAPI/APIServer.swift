import Hummingbird
import Logging
import PostgresNIO

/// Builds the HTTP API: the router with every route, and the Hummingbird application that serves it.
///
/// The application is a `Service`; the caller runs it in a `ServiceGroup` after the `PostgresClient` it uses.
public enum APIServer {
    /// The router with every route.
    public static func buildRouter(database: PostgresClient) -> Router<BasicRequestContext> {
        let router = Router()
        router.middlewares.add(LogRequestsMiddleware(.debug))
        HealthController(database: database).addRoutes(to: router)
        return router
    }

    /// The application listening on `host`:`port`.
    public static func buildApplication(
        host: String,
        port: Int,
        database: PostgresClient,
        logger: Logger
    ) -> Application<RouterResponder<BasicRequestContext>> {
        Application(
            router: Self.buildRouter(database: database),
            configuration: .init(address: .hostname(host, port: port), serverName: "blimp"),
            logger: logger
        )
    }
}
