import BlimpCore
import BlimpSimulator
import Logging
import ServiceLifecycle

/// The simulator's APNs endpoint and admin endpoint as services, for `blimp apns-sim` and `blimp dev`.
struct EmbeddedSimulator {
    let services: [any Service]
    /// Where clients reach it and which CA they trust, for `BLIMP_APNS_URL` and `BLIMP_APNS_CA_FILE`.
    let endpoint: APNsEndpointSettings
    let url: String
    let adminURL: String

    init(
        host: String,
        port: Int,
        adminPort: Int,
        tls: SimulatorTLS,
        apns: SimulatedAPNs,
        settings: ConnectionSettings,
        logger: Logger
    ) throws {
        let shared = SharedConnectionSettings(settings)
        let server = try SimulatorServer(host: host, port: port, tls: tls, apns: apns, settings: shared, logger: logger)
        let admin = SimulatorAdmin.buildApplication(host: host, port: adminPort, apns: apns, settings: shared, logger: logger)
        self.services = [server, admin]
        self.url = "https://\(host):\(port)"
        self.endpoint = try APNsEndpointSettings(overrideURL: self.url, caFile: tls.caFile)
        self.adminURL = "http://\(host):\(adminPort)"
    }

    /// Two lines: the endpoints, and the CA to trust when the simulator made its own.
    var banner: String {
        var banner = "APNs simulator: \(self.url), admin \(self.adminURL)\n"
        if let caFile = self.endpoint.caFile {
            banner += "Its CA: \(caFile) (trust it with BLIMP_APNS_CA_FILE=\(caFile))\n"
        }
        return banner
    }
}
