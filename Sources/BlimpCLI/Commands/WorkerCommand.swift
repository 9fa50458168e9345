import ArgumentParser
import BlimpAPNs
import BlimpCore
import BlimpDispatch
import BlimpStore
import Logging
import PostgresNIO

/// `blimp worker`: delivers queued pushes to APNs. Run any number, on any hosts, against one PostgreSQL.
struct WorkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "Deliver queued pushes to APNs (run any number of workers against one database)."
    )

    @Option(help: "Parts of pushes this worker fans out at once.") var concurrentPushes = 4
    @Option(help: "Targets read, sent and checkpointed together, and per-user pushes claimed together.") var batchSize = 1000
    @Option(help: "Parts a large push is split into, for every worker to share.") var fanOutParts = 8
    @Option(help: "Seconds a claimed part stays with this worker without a checkpoint before another may resume it.")
    var leaseSeconds = 30
    @Option(help: "Seconds between looks for queued pushes that no notification announced.") var pollSeconds = 5
    @Option(help: "A name for this worker in logs and leases (default: worker-<random>).") var name: String?
    @OptionGroup var webhooks: WebhookOptions
    @OptionGroup var metrics: MetricsOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var direct: DirectDatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.worker")
        let metrics = try self.metrics.bootstrap()
        let tracing = try TraceExport.bootstrap(serviceName: "blimp-worker", logger: logger)
        guard self.concurrentPushes > 0, self.batchSize > 0, self.fanOutParts > 0, self.leaseSeconds > 0, self.pollSeconds > 0 else {
            throw CLIError("--concurrent-pushes, --batch-size, --fan-out-parts, --lease-seconds and --poll-seconds must be positive")
        }
        var configuration = WorkerConfiguration()
        configuration.concurrentPushes = self.concurrentPushes
        configuration.batchSize = self.batchSize
        configuration.fanOutParts = self.fanOutParts
        configuration.lease = .seconds(self.leaseSeconds)
        configuration.pollInterval = .seconds(self.pollSeconds)
        let url = try self.database.resolve()
        // A statement the worker gave up on (StoreError.deadline) is cancelled by PostgreSQL too: left running, a claim
        // holds its rows' locks and keeps vacuum from the queue's dead entries, which slows every later claim.
        let database = await Database.connecting(to: url, pool: "worker", statementTimeout: StoreError.deadline, logger: logger)
        let (listening, listener) = try await self.listening(beside: url, logger: logger)
        let apns = try APNsEndpointSetting.resolve()
        let broadcast = try APNsBroadcastClient(endpoint: apns, logger: logger)
        let serverKey = try ServerKeySetting.resolve()
        let worker = try Self.worker(
            database: database, listening: listening, apns: apns, broadcast: broadcast, serverKey: serverKey,
            configuration: configuration, name: self.name, preparedStatements: !url.pooled, logger: logger)
        let webhooks = Self.webhookSender(
            database: database, serverKey: serverKey, configuration: try self.webhooks.sender(), name: worker.name,
            logger: logger)
        let endpoint = metrics.map { [$0.service(samplers: [worker.apns.recordConnectionMetrics], logger: logger)] } ?? []
        try await runServices([tracing, listener].compactMap { $0 } + [database, worker, webhooks] + endpoint, logger: logger)
        await worker.apns.shutdown()
        await broadcast.shutdown()
    }

    /// The webhooks' sender beside a worker named `name`.
    static func webhookSender(
        database: Database, serverKey: ServerKey, configuration: WebhookSender.Configuration, name: String, logger: Logger
    ) -> WebhookSender {
        WebhookSender(
            store: WebhookStore(client: database, logger: logger), events: EventLog(client: database, logger: logger),
            serverKey: serverKey, configuration: configuration, name: name, logger: logger)
    }

    /// Where the worker LISTENs: on its database unless `url` goes through a transaction pooler, then on a client of
    /// its own for the direct URL (returned, to be run), else nowhere.
    private func listening(beside url: DatabaseURL, logger: Logger) async throws -> (Worker.Listening, Database?) {
        guard url.pooled else { return (.onDatabase, nil) }
        guard let direct = try self.direct.sessionURL(beside: url) else {
            logger.notice("DATABASE_URL goes through a transaction pooler and DATABASE_DIRECT_URL is unset: no LISTEN, new pushes wait for the poll")
            return (.off, nil)
        }
        let listener = await Database.connecting(to: direct, pool: "listener", maximumConnections: 1, logger: logger)
        return (.on(listener), listener)
    }

    /// A worker on `database`, sending to `apns`, and publishing to live activity channels (and deleting those an end
    /// went through) with `broadcast`, which the caller shuts down.
    static func worker(
        database: Database,
        listening: Worker.Listening = .onDatabase,
        apns: APNsEndpointSettings,
        broadcast: APNsBroadcastClient,
        serverKey: ServerKey,
        configuration: WorkerConfiguration = WorkerConfiguration(),
        name: String? = nil,
        preparedStatements: Bool = true,
        logger: Logger
    ) throws -> Worker {
        let client = try APNsClient(configuration: APNsClientConfiguration(endpoint: apns), logger: logger)
        return Worker(
            database: database, listening: listening, apns: client, broadcast: broadcast, serverKey: serverKey,
            configuration: configuration, name: name, preparedStatements: preparedStatements, logger: logger)
    }
}
