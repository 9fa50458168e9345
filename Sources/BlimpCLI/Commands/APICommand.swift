import ArgumentParser
import BlimpAPI
import BlimpStore
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
        let url = try self.database.resolve()
        let database = PostgresClient(configuration: url.clientConfiguration(), backgroundLogger: logger)
        let api = APIServer.buildApplication(
            host: self.listen.host,
            port: self.listen.port,
            database: database,
            logger: logger
        )
        try await runServices([database, api], logger: logger)
    }
}

/// Runs long-lived services in order until SIGTERM or SIGINT, then shuts them down in reverse order.
func runServices(_ services: [any Service], logger: Logger) async throws {
    let group = ServiceGroup(
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    )
    try await group.run()
}
