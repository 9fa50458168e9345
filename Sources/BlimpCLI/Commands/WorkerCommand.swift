import ArgumentParser
import BlimpAPNs
import BlimpCore
import BlimpDispatch
import Logging
import PostgresNIO

/// `blimp worker`: delivers queued pushes to APNs. Run any number, on any hosts, against one PostgreSQL.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Deliver queued pushes to APNs (run any number of workers against one database)."
    )

    @Option(help: "Pushes this worker fans out at once.") var concurrentPushes = 4
    @Option(help: "Targets read, sent and checkpointed together.") var batchSize = 1000
    @Option(help: "Seconds a claimed push stays with this worker without a checkpoint before another may resume it.")
    var leaseSeconds = 30
    @Option(help: "A name for this worker in logs and leases (default: worker-<random>).") var name: String?
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.worker")
        guard self.concurrentPushes > 0, self.batchSize > 0, self.leaseSeconds > 0 else {
            throw CLIError("--concurrent-pushes, --batch-size and --lease-seconds must be positive")
        }
        let database = PostgresClient(configuration: try self.database.resolve().clientConfiguration(), backgroundLogger: logger)
        let worker = try Self.worker(
            database: database, apns: try APNsEndpointSetting.resolve(), serverKey: try ServerKeySetting.resolve(),
            concurrentPushes: self.concurrentPushes, batchSize: self.batchSize, lease: .seconds(self.leaseSeconds),
            name: self.name, logger: logger)
        try await runServices([database, worker], logger: logger)
        await worker.apns.shutdown()
    }

    /// A worker on `database`, sending to `apns`.
    static func worker(
        database: PostgresClient,
        apns: APNsEndpointSettings,
        serverKey: ServerKey,
        concurrentPushes: Int = 4,
        batchSize: Int = 1000,
        lease: Duration = .seconds(30),
        name: String? = nil,
        logger: Logger
    ) throws -> Worker {
        var configuration = WorkerConfiguration()
        configuration.concurrentPushes = concurrentPushes
        configuration.batchSize = batchSize
        configuration.lease = lease
        let client = try APNsClient(configuration: APNsClientConfiguration(endpoint: apns), logger: logger)
        return Worker(database: database, apns: client, serverKey: serverKey, configuration: configuration, name: name, logger: logger)
    }
}
