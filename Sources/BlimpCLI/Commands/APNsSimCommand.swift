import ArgumentParser
import BlimpCore
import BlimpSimulator
import Foundation

/// `blimp apns-sim`: the APNs simulator, for local runs, tests and benchmarks.
struct APNsSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-sim",
        abstract: "Run a faithful APNs simulator: HTTP/2 over TLS, provider-token checks, simulated devices, faults."
    )

    @Option(help: "The address the APNs endpoint listens on.") var host = "127.0.0.1"
    @Option(help: "The APNs endpoint's port (Apple's alternative port is 2197).") var port = 2197
    @Option(help: "The admin endpoint's port (inspection and control, HTTP/1.1 on the same address).")
    var adminPort = 2198
    @Option(
        name: .customLong("trust-key"),
        help: "A provider-token key to accept, as KEY_ID:TEAM_ID:path/to/AuthKey.p8 (repeatable)."
    )
    var trustKeys: [String] = []
    @Option(help: "The certificate chain (PEM) to serve; without it a CA and a loopback certificate are created.")
    var tlsCert: String?
    @Option(help: "The private key (PEM) for --tls-cert.") var tlsKey: String?
    @Option(help: "Where the created CA and certificate are kept.") var stateDir = ".blimp/apns-sim"
    @Option(
        name: .customLong("tls-name"),
        help: "Another DNS name for the created certificate, e.g. the simulator's host name in a container network (repeatable)."
    )
    var tlsNames: [String] = []
    @Option(help: "The APNs environment simulated: sandbox answers each accepted device push with apns-unique-id, production does not.")
    var environment: APNsEnvironment = .sandbox
    @Option(help: "Broadcast channels one bundle id may have (Apple: 10,000 per app and environment).")
    var channelLimit = SimulatorConfiguration().channelLimit
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard (self.tlsCert == nil) == (self.tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        guard self.channelLimit >= 0 else { throw ValidationError("--channel-limit must be 0 or more") }
        guard self.tlsNames.isEmpty || self.tlsCert == nil else {
            throw ValidationError("--tls-name names the created certificate, not --tls-cert's")
        }
    }

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.apns-sim")
        let tls =
            if let certificate = self.tlsCert, let key = self.tlsKey {
                try SimulatorTLS.load(certificateFile: certificate, keyFile: key)
            } else {
                try SimulatorTLS.loadOrCreate(in: self.stateDir, names: self.tlsNames)
            }
        var configuration = SimulatorConfiguration()
        configuration.environment = self.environment
        configuration.channelLimit = self.channelLimit
        let apns = SimulatedAPNs(configuration: configuration)
        for trustKey in self.trustKeys {
            let parts = trustKey.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3 else { throw CLIError("--trust-key takes KEY_ID:TEAM_ID:path (got \"\(trustKey)\")") }
            try apns.trust(keyID: parts[0], teamID: parts[1], p8: try readKeyFile(parts[2]))
        }
        let simulator = try EmbeddedSimulator(
            host: self.host,
            port: self.port,
            adminPort: self.adminPort,
            tls: tls,
            apns: apns,
            settings: self.connection.settings,
            logger: logger
        )
        FileHandle.standardOutput.write(Data(simulator.banner.utf8))
        try await runServices(simulator.services, logger: logger)
    }
}

/// Connection-level behaviour of the simulator, also settable through its admin endpoint.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "MAX_CONCURRENT_STREAMS after the first valid provider token (1 before it, as APNs).")
    var maxStreams = ConnectionSettings().maxConcurrentStreams
    @Option(help: "Send GOAWAY after every N streams on a connection (0: never).") var goAwayEvery = 0
    @Option(help: "Drop a connection without GOAWAY at every Nth stream (0: never).") var dropEvery = 0
    @Option(help: "Milliseconds added to every response.") var latencyMs = 0

    var settings: ConnectionSettings {
        var settings = ConnectionSettings()
        settings.maxConcurrentStreams = self.maxStreams
        settings.goAwayEvery = self.goAwayEvery
        settings.dropEvery = self.dropEvery
        settings.latencyMilliseconds = self.latencyMs
        return settings
    }
}
