import ArgumentParser
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
    @Option(help: "The certificate chain (PEM) to serve; without it a CA and a loopback certificate are created.")
    var tlsCert: String?
    @Option(help: "The private key (PEM) for --tls-cert.") var tlsKey: String?
    @Option(help: "Where the created CA and certificate are kept.") var stateDir = ".blimp/apns-sim"
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var logging: LoggingOptions

    func validate() throws {
        guard (self.tlsCert == nil) == (self.tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
    }

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.apns-sim")
        let tls =
            if let certificate = self.tlsCert, let key = self.tlsKey {
                try SimulatorTLS.load(certificateFile: certificate, keyFile: key)
            } else {
                try SimulatorTLS.loadOrCreate(in: self.stateDir)
            }
        if let caFile = tls.caFile {
            print("APNs simulator CA: \(caFile) (trust it with BLIMP_APNS_CA_FILE=\(caFile))")
        }
        let server = try SimulatorServer(
            host: self.host,
            port: self.port,
            tls: tls,
            apns: SimulatedAPNs(),
            settings: SharedConnectionSettings(self.connection.settings),
            logger: logger
        )
        try await runServices([server], logger: logger)
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
