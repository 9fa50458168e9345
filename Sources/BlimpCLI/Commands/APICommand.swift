import ArgumentParser
import BlimpAPI
import BlimpStore
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle

/// `blimp api`: the HTTP API server.
struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "api", abstract: "Run the HTTP API.")

    @OptionGroup var listen: ListenOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.api")
        let (database, api) = self.listen.buildAPI(database: try self.database.resolve(), logger: logger)
        try await runServices([database, api], logger: logger)
    }
}

extension ListenOptions {
    /// The API server on these options' address, with the database client it needs running before it.
    func buildAPI(
        database url: DatabaseURL,
        logger: Logger
    ) -> (PostgresClient, Application<RouterResponder<BasicRequestContext>>) {
        let database = PostgresClient(configuration: url.clientConfiguration(), backgroundLogger: logger)
        let api = APIServer.buildApplication(host: self.host, port: self.port, database: database, logger: logger)
        return (database, api)
    }
}

/// Runs long-lived services in order until SIGTERM or SIGINT, then shuts them down in reverse order.
func runServices(_ services: [any Service], logger: Logger) async throws {
    let group = ServiceGroup(
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    )
    try await group.run()
}
