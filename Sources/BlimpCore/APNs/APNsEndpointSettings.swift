import Foundation

/// Where the deployment sends APNs requests, and which extra certificate authority it trusts.
///
/// Without an override each app talks to Apple's host for its ``APNsEnvironment``. `BLIMP_APNS_URL` sends every
/// app's traffic to one base URL instead (the simulator, `blimp apns-sim`, or a proxy), and `BLIMP_APNS_CA_FILE`
/// adds a PEM certificate authority to the system's trust roots for it.
public struct APNsEndpointSettings: Sendable, Equatable {
    /// The base URL that replaces Apple's hosts, if any.
    public let overrideURL: URL?
    /// A PEM file with an extra certificate authority to trust, if any.
    public let caFile: String?

    /// Validates the raw settings: the override must be an `https` URL with a host and no path; the CA file is only
    /// checked for presence here and read by the transport.
    public init(overrideURL: String?, caFile: String?) throws(APNsEndpointSettingsError) {
        self.caFile = caFile.flatMap { $0.isEmpty ? nil : $0 }
        guard let raw = overrideURL, !raw.isEmpty else {
            self.overrideURL = nil
            return
        }
        guard let url = URL(string: raw), url.scheme == "https", let host = url.host, !host.isEmpty,
            url.path.isEmpty || url.path == "/", url.query == nil
        else {
            throw .invalidURL(raw)
        }
        self.overrideURL = url
    }

    /// Apple's production and sandbox hosts, no extra trust.
    public static let apple = APNsEndpointSettings(uncheckedURL: nil, caFile: nil)

    private init(uncheckedURL: URL?, caFile: String?) {
        self.overrideURL = uncheckedURL
        self.caFile = caFile
    }

    /// The base URL for an app in `environment`: the override when set, otherwise Apple's host.
    public func baseURL(for environment: APNsEnvironment) -> URL {
        self.overrideURL ?? environment.appleBaseURL
    }
}

/// A bad APNs endpoint setting.
public enum APNsEndpointSettingsError: Error, Equatable, CustomStringConvertible {
    case invalidURL(String)

    public var description: String {
        switch self {
        case .invalidURL(let raw):
            "BLIMP_APNS_URL must be an https URL with a host and no path, e.g. https://127.0.0.1:2197 (got \"\(raw)\")"
        }
    }
}
