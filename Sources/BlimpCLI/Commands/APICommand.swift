import ArgumentParser
import BlimpAPI
import BlimpAPNs
import BlimpCore
import BlimpStore
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle

/// `blimp api`: the HTTP API server.
struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "api", abstract: "Run the HTTP API.")

    @OptionGroup var listen: ListenOptions
    @OptionGroup var limits: LimitOptions
    @OptionGroup var retention: RetentionOptions
    @OptionGroup var metrics: MetricsOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var direct: DirectDatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.api")
        let metrics = try self.metrics.bootstrap()
        let tracing = try TraceExport.bootstrap(serviceName: "blimp-api", logger: logger)
        let serverKey = try ServerKeySetting.resolve()
        let url = try self.database.resolve()
        let janitorURL = try self.direct.sessionURL(beside: url)
        if janitorURL == nil {
            logger.notice(
                "DATABASE_URL goes through a transaction pooler and DATABASE_DIRECT_URL is unset: the janitor's deletes run under the role's statement_timeout")
        }
        let services = try await self.listen.buildAPI(
            database: url, janitor: janitorURL, serverKey: serverKey, limits: self.limits.limits, retention: self.retention,
            apns: try APNsEndpointSetting.resolve(), logger: logger)
        try await runServices([tracing].compactMap { $0 } + services.all + services.metrics(metrics, logger: logger), logger: logger)
        await services.broadcast.shutdown()
    }
}

/// The API process's services: the database clients and the watch that refuses requests while the database does
/// not answer, which must run first, the API, and the janitor that deletes
/// expired Live Activities, idempotency keys, nonces, console sessions and refilled rate buckets, pushes, delivery
/// outcomes, send tallies and audit entries past their retention, creates delivery outcomes' day partitions ahead, and
/// refreshes the console's rollups; and the APNs channel-management client live activity channels are created and
/// deleted with (the API sends no pushes), for the caller to shut down after the services.
struct APIServices {
    let database: Database
    let janitorDatabase: Database
    var api: Application<RouterResponder<APIRequestContext>>
    let janitor: Janitor
    let broadcast: APNsBroadcastClient

    var all: [any Service] { [self.database, self.janitorDatabase, self.api, self.janitor] }

    /// With metrics on: the queue's gauges (on the janitor's connection) and the metrics endpoint.
    func metrics(_ server: MetricsServer?, samplers: [MetricsServer.Sampler] = [], logger: Logger) -> [any Service] {
        guard let server else { return [] }
        let gauges = QueueGauges(
            leases: DeploymentLeases(client: self.janitorDatabase, logger: logger),
            dispatch: DispatchStore(client: self.janitorDatabase, logger: logger), logger: logger)
        return [gauges, server.service(samplers: [gauges.sample] + samplers, logger: logger)]
    }
}

extension ListenOptions {
    /// The HTTP server (the API and the console: ``BlimpServer``) on these options' address, with the database clients
    /// it needs running before it; the janitor connects to `janitor` (PostgreSQL itself, when `url` goes through a
    /// transaction pooler), else to `url`. Live activity channels are managed at `apns`'s channel-management host.
    func buildAPI(
        database url: DatabaseURL, janitor janitorURL: DatabaseURL? = nil, serverKey: ServerKey, limits: APILimits,
        retention options: RetentionOptions, apns: APNsEndpointSettings, logger: Logger
    ) async throws -> APIServices {
        let retention = try options.policy()
        // Statements of the API's requests end with their request; the janitor's long deletes have connections of
        // their own, without that limit.
        let database = await Database.connecting(to: url, pool: "api", statementTimeout: limits.requestTimeout, logger: logger)
        let janitorDatabase = await Database.connecting(
            to: janitorURL ?? url, pool: "janitor", statementTimeout: .zero, maximumConnections: 1, logger: logger)
        let broadcast = try APNsBroadcastClient(endpoint: apns, logger: logger)
        var configuration = APIConfiguration(
            serverKey: serverKey, publicURL: self.publicURL, limits: limits, retention: retention, broadcastChannels: broadcast)
        configuration.webhooksAllowPrivate = WebhookOptions.allowsPrivate
        var api = BlimpServer.buildApplication(
            host: self.host,
            port: self.port,
            database: database,
            configuration: configuration,
            adminToken: self.adminToken,
            masterSecretSignIn: self.masterSecretSignIn,
            preparedStatements: !url.pooled,
            logger: logger
        )
        let janitor = Self.janitor(on: janitorDatabase, retention: retention, interval: options.janitorInterval, logger: logger)
        if url.pooled {
            api.beforeServerStarts { await Self.checkPooledSessions(of: database, url: url, statementTimeout: limits.requestTimeout, logger: logger) }
        }
        return APIServices(
            database: database, janitorDatabase: janitorDatabase, api: api, janitor: janitor, broadcast: broadcast)
    }

    /// The janitor's chores, in order, on its own connection; `retention` for the deployment, each app's own retentions
    /// read at every round.
    private static func janitor(on database: Database, retention: RetentionPolicy, interval: Duration, logger: Logger) -> Janitor {
        let channels = ChannelStore(client: database, logger: logger)
        let keys = IdempotencyKeys(client: database, logger: logger)
        let dispatch = DispatchStore(client: database, logger: logger)
        let nonces = NonceLedger(client: database, logger: logger)
        let sessions = ConsoleSessions(client: database, logger: logger)
        let console = ConsoleStore(client: database, logger: logger)
        let apps = AppStore(client: database, logger: logger)
        let pushes = PushHistory(client: database, logger: logger)
        let audit = AuditLog(client: database, logger: logger)
        let events = EventLog(client: database, logger: logger)
        let rateBuckets = RateBuckets(client: database, logger: logger)
        /// The cutoff of `setting` for apps keeping the deployment's retention, and for each app with its own.
        @Sendable func cutoffs(_ setting: RetentionPolicy.Setting) async throws -> (default: Date, apps: [Int64: Date]) {
            retention.cutoffs(setting, apps: try await apps.retentions(), now: Date())
        }
        return Janitor(
            [
                .init("live activity states that came with time", verb: "reported") { try await channels.reportTimedActivityStates(budget: $0) },
                .init("expired live activities") { try await channels.deleteExpiredActivities(budget: $0) },
                .init("activities awaiting their token", verb: "expired") { try await dispatch.expireAwaitingActivities(now: Date(), budget: $0) },
                .init("expired idempotency keys") { try await keys.deleteExpired(budget: $0) },
                .init("pushes past their retention") { budget in
                    let (deployment, apps) = try await cutoffs(.pushes)
                    return try await pushes.deleteFinished(defaultCutoff: deployment, cutoffs: apps, budget: budget)
                },
                .init("delivery outcome partitions", verb: "created") { _ in try await dispatch.createOutcomePartitions(now: Date()) },
                .init("delivery outcomes and send tallies past their retention") { budget in
                    let (deployment, apps) = try await cutoffs(.outcomes)
                    return try await dispatch.trimOutcomes(defaultCutoff: deployment, cutoffs: apps, budget: budget)
                },
                .init("expired nonces") { try await nonces.deleteExpired(budget: $0) },
                .init("expired console sessions") { try await sessions.deleteExpired(budget: $0) },
                .init("audit entries past their retention") { budget in
                    let (deployment, apps) = try await cutoffs(.audit)
                    return try await audit.deleteOld(defaultCutoff: deployment, cutoffs: apps, budget: budget)
                },
                .init("events past their retention") { budget in
                    let (deployment, apps) = try await cutoffs(.events)
                    return try await events.deleteOld(defaultCutoff: deployment, cutoffs: apps, budget: budget)
                },
                .init("console rollups", verb: "refreshed") { _ in try await console.refreshRollups(now: Date()) },
                .init("refilled rate buckets") { try await rateBuckets.deleteRefilled(budget: $0) },
            ],
            leases: DeploymentLeases(client: database, logger: logger),
            logger: logger,
            interval: interval
        )
    }

    /// Warns, naming the statements to run, when the sessions behind a transaction pooler lack what the API sends a
    /// direct connection: JIT off and the request timeout as `statement_timeout`.
    private static func checkPooledSessions(of database: Database, url: DatabaseURL, statementTimeout: Duration, logger: Logger) async {
        do {
            let settings = try await PooledSessionSettings.read(from: database, logger: logger)
            let corrections = settings.corrections(for: url, statementTimeout: statementTimeout)
            guard !corrections.isEmpty else { return }
            logger.warning(
                "the pooler's sessions keep JIT on or let statements outlive their request; run the statements in sql",
                metadata: ["sql": "\(corrections.joined(separator: "; "))"])
        } catch {
            logger.warning("the pooler's session settings could not be read", metadata: ["error": "\(error)"])
        }
    }
}

/// Runs long-lived services in order until SIGTERM or SIGINT, then shuts them down in reverse order.
func runServices(_ services: [any Service], logger: Logger) async throws {
    let group = ServiceGroup(
        configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    )
    try await group.run()
}
