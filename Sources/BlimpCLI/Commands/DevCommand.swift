import ArgumentParser
import BlimpCore
import BlimpDispatch
import BlimpSimulator
import BlimpStore
import Foundation
import Logging

/// `blimp dev`: a first run on one machine. Migrates the local database, creates (or reuses) a demo app, prints how
/// to call it, and runs the API, a worker and an APNs simulator that trusts the demo app's key, in this one process.
/// With `BLIMP_APNS_URL` set, that endpoint is used instead and no simulator runs.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run Blimp for local development: migrate, create a demo app, serve the API, a worker and an APNs simulator."
    )

    @Option(help: "Where the server key and the demo app's key and credentials are kept.")
    var stateDir = ".blimp"
    @OptionGroup var listen: ListenOptions
    @OptionGroup var limits: LimitOptions
    @OptionGroup var retention: RetentionOptions
    @Option(help: "The APNs simulator's port (not run when BLIMP_APNS_URL is set).") var apnsSimPort = 2197
    @Option(help: "The APNs simulator's admin port.") var apnsSimAdminPort = 2198
    @OptionGroup var webhooks: WebhookOptions
    @OptionGroup var metrics: MetricsOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.dev")
        let metrics = try self.metrics.bootstrap()
        let tracing = try TraceExport.bootstrap(serviceName: "blimp-dev", logger: logger)
        let state = try StateFolder(path: self.stateDir)
        let serverKey = try state.serverKey()
        let configured = try APNsEndpointSetting.resolve()
        let simulator = configured.overrideURL == nil ? try self.simulator(trusting: state, logger: logger) : nil
        let apns = simulator?.endpoint ?? configured
        let url = try self.database.resolve()
        // The schema first, so that the worker finds its tables from its first look. One line for it, not one per
        // version: a first run applies them all.
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .notice)
        let migrator = quiet
        let applied = try await url.withDatabase(logger: logger) { try await Schema.apply(to: $0, logger: migrator) }
        logger.info("schema ready", metadata: ["version": "\(Schema.latestVersion)", "applied": "\(applied.count)"])

        var services = try await self.listen.buildAPI(
            database: url, serverKey: serverKey, limits: self.limits.limits, retention: self.retention, apns: apns, logger: logger)
        let database = services.database
        // Runs once the database client is up, before the API listens.
        services.api.beforeServerStarts {
            let demo = try await DemoApp.ensure(
                in: state,
                store: AppStore(client: database, logger: logger),
                serverKey: serverKey
            )
            FileHandle.standardOutput.write(Data(self.banner(demo: demo, apns: apns, simulator: simulator).utf8))
        }
        let worker = try WorkerCommand.worker(
            database: database, apns: apns, broadcast: services.broadcast, serverKey: serverKey, logger: logger)
        let webhooks = WorkerCommand.webhookSender(
            database: database, serverKey: serverKey, configuration: try self.webhooks.sender(), name: worker.name,
            logger: logger)
        let endpoint = services.metrics(metrics, samplers: [worker.apns.recordConnectionMetrics], logger: logger)
        try await runServices(
            [tracing].compactMap { $0 } + services.all + [worker, webhooks] + (simulator?.services ?? []) + endpoint, logger: logger)
        await worker.apns.shutdown()
        await services.broadcast.shutdown()
    }

    /// The simulator on the loopback address, with its CA in the state folder, trusting the demo app's key.
    private func simulator(trusting state: StateFolder, logger: Logger) throws -> EmbeddedSimulator {
        let apns = SimulatedAPNs()
        try apns.trust(keyID: DemoApp.keyID, teamID: DemoApp.teamID, p8: state.demoKeyPEM(keyID: DemoApp.keyID))
        return try EmbeddedSimulator(
            host: "127.0.0.1",
            port: self.apnsSimPort,
            adminPort: self.apnsSimAdminPort,
            tls: try SimulatorTLS.loadOrCreate(in: state.file("apns-sim")),
            apns: apns,
            settings: ConnectionSettings(),
            logger: logger
        )
    }

    func banner(demo: CreatedApp, apns: APNsEndpointSettings, simulator: EmbeddedSimulator?) -> String {
        let base = "http://\(self.listen.host):\(self.listen.port)"
        let blimp = Self.invocation()
        var tries = [
            "curl \(base)/ready",
            "BLIMP_APP_SECRET=\(demo.appSecret) \(blimp) simulate-devices --url \(base) --app-key \(demo.appKey) --count 100",
            "curl -u \(demo.appKey):\(demo.masterSecret) -H 'Accept: application/vnd.urbanairship+json; version=3' \(base)/api/channels?limit=5",
            "BLIMP_MASTER_SECRET=\(demo.masterSecret) \(blimp) push --url \(base) --app-key \(demo.appKey) --name demo-match --content-state '{\"home\": 1}' --wait",
        ]
        if let simulator { tries.append("curl \(simulator.adminURL)/counters   # what the simulated devices received") }
        let apnsLine = simulator.map { "the simulator at \($0.url) (admin \($0.adminURL)), trusting the demo app's key" }
        return """

            Blimp is running (Ctrl-C stops it).
              API            \(base)
              Console        \(base)/console (sign in with the app key and master secret\(self.listen.adminToken == nil ? "" : ", or BLIMP_ADMIN_TOKEN"))
              People         blimp accounts create --email E --app-key \(demo.appKey) --role sender (then sign in by email)
              Demo app       \(demo.name) (\(demo.bundleID)), credentials in \(self.stateDir)/demo-app.json
              App key        \(demo.appKey)
              App secret     \(demo.appSecret)
              Master secret  \(demo.masterSecret)
              APNs           \(apnsLine ?? apns.summary)

            Try:
            \(tries.map { "  " + $0 }.joined(separator: "\n"))


            """
    }

    /// How to run this `blimp` again from the same folder: as it was invoked when that names a path (a build's
    /// `.build/debug/blimp` is not on `PATH`), else `blimp`.
    static func invocation(_ arguments: [String] = CommandLine.arguments) -> String {
        guard let first = arguments.first, first.contains("/") else { return "blimp" }
        return first.contains(" ") ? "'\(first)'" : first
    }
}
