import ArgumentParser
import BlimpCore
import Foundation

/// `blimp simulate-devices`: many devices registering the way the stock Airship SDK does, against a running API:
/// to load demo data, and to measure registration intake (bench/registration.sh).
struct SimulateDevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate-devices",
        abstract: "Register simulated devices, each with a channel and one tracked Live Activity, and report the rate."
    )

    @Option(help: "The API's URL.") var url = "http://127.0.0.1:8080"
    @Option(help: "The app's key.") var appKey: String
    @Option(name: .customLong("app-secret"), help: "The app's secret (never the master secret), or BLIMP_APP_SECRET.")
    var appSecretFlag: String?
    var appSecret: String? { self.appSecretFlag ?? ProcessInfo.processInfo.environment["BLIMP_APP_SECRET"] }
    @Option(help: "How many devices register.") var count = 1000
    @Option(help: "How many register at once, each on its own connection.") var concurrency = 32
    @Option(help: "The name each device tracks its Live Activity under.") var activityName = "demo-match"
    @Option(help: "Channel lookups per second meanwhile, with BLIMP_MASTER_SECRET set (0: none).") var lookupRate = 0
    @Option(help: "Devices started per second (default: as fast as the API answers).") var rate: Int?
    @Flag(
        inversion: .prefixedNo,
        help: "Fetch a channel token for the batch, as the SDK does (--no-channel-token: sign the batch instead)."
    )
    var channelToken = true

    func run() async throws {
        guard let appSecret else { throw CLIError("give --app-secret or set BLIMP_APP_SECRET") }
        guard let components = URLComponents(string: self.url), components.scheme == "http", let host = components.host else {
            throw CLIError("--url must be an http:// URL (got \(self.url))")
        }
        guard self.count > 0, self.concurrency > 0, (self.rate ?? 1) > 0 else {
            throw CLIError("--count, --concurrency and --rate must be positive")
        }
        let simulator = DeviceSimulator(
            host: host,
            port: components.port ?? 80,
            appKey: self.appKey,
            signature: SDKSignature(appSecret: appSecret),
            count: self.count,
            concurrency: self.concurrency,
            activityName: self.activityName,
            masterSecret: ProcessInfo.processInfo.environment["BLIMP_MASTER_SECRET"],
            lookupRate: self.lookupRate,
            rate: self.rate,
            fetchesChannelToken: self.channelToken
        )
        let count = self.count
        let report = try await simulator.run { done, seconds in
            let line = "\rregistered \(done)/\(count) devices, \(Int(Double(done) / max(seconds, 0.001))) devices/s   "
            FileHandle.standardError.write(Data(line.utf8))
        }
        FileHandle.standardError.write(Data("\n".utf8))
        print(Self.table(report))
    }

    static func table(_ report: DeviceSimulator.Report) -> String {
        func ms(_ latencies: [Double], _ quantile: Double) -> String {
            guard !latencies.isEmpty else { return "-" }
            let sorted = latencies.sorted()
            return String(format: "%.2f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))] * 1000)
        }
        var lines = [
            String(format: "devices %d in %.2f s: %.0f devices/s", report.devices, report.seconds, Double(report.devices) / report.seconds),
            "request                        count    p50 ms    p99 ms",
        ]
        for (name, latencies) in [("POST /api/channels", report.create), ("GET /api/auth/device", report.auth),
                                  ("PUT /api/channels/sdk/batch", report.batch), ("GET /api/channels/{id}", report.lookups)]
        where !latencies.isEmpty {
            let columns = ["\(latencies.count)", ms(latencies, 0.5), ms(latencies, 0.99)]
            lines.append(
                name.padding(toLength: 27, withPad: " ", startingAt: 0)
                    + columns.map { String(repeating: " ", count: max(0, 10 - $0.count)) + $0 }.joined())
        }
        return lines.joined(separator: "\n")
    }
}
