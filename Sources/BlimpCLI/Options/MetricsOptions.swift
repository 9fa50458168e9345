import ArgumentParser
import Foundation

/// `--metrics-host` and `--metrics-port`: where `GET /metrics` listens, apart from the public API.
struct MetricsOptions: ParsableArguments {
    @Option(help: "The address the metrics endpoint listens on. Defaults to $BLIMP_METRICS_HOST, else 127.0.0.1.")
    var metricsHost: String?
    @Option(help: "Serve GET /metrics (Prometheus) on this port. Defaults to $BLIMP_METRICS_PORT; unset: no metrics.")
    var metricsPort: Int?

    /// When metrics are on: the process's metrics backend, set up, and the endpoint to serve it on.
    func bootstrap() throws -> MetricsServer? {
        try self.resolve().map { MetricsServer.bootstrap(host: $0.host, port: $0.port) }
    }

    /// The address, or `nil` when metrics are off.
    func resolve() throws -> (host: String, port: Int)? {
        let environment = ProcessInfo.processInfo.environment
        let port: Int
        if let flag = self.metricsPort {
            port = flag
        } else if let text = environment["BLIMP_METRICS_PORT"], !text.isEmpty {
            guard let value = Int(text) else { throw CLIError("BLIMP_METRICS_PORT must be a port number") }
            port = value
        } else {
            return nil
        }
        guard (0...65535).contains(port) else { throw CLIError("the metrics port must be 0 to 65535") }
        let host = self.metricsHost ?? environment["BLIMP_METRICS_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        return (host, port)
    }
}
