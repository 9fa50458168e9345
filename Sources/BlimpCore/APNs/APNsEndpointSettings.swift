import Foundation

/// Where the deployment sends APNs requests, and which extra certificate authority it trusts.
///
/// Three kinds of request go to three hosts (docs/references.md#apns-hosts): device pushes
/// (`BLIMP_APNS_URL`), broadcast channel management (`BLIMP_APNS_CHANNELS_URL`) and broadcast publishes
/// (`BLIMP_APNS_BROADCAST_URL`). Without an override each app talks to Apple's host for its ``APNsEnvironment``.
/// `BLIMP_APNS_URL` alone sends all three to one base URL (the simulator, `blimp apns-sim`, serves them on one
/// listener); the other two replace it for their own requests. `BLIMP_APNS_CA_FILE` adds a PEM certificate
/// authority to the system's trust roots for all of them.
public struct APNsEndpointSettings: Sendable, Equatable {
    /// The base URL that replaces Apple's hosts, if any.
    public let overrideURL: URL?
    /// The base URL for channel management, if set apart from ``overrideURL``.
    public let channelsURL: URL?
    /// The base URL for broadcast publishes, if set apart from ``overrideURL``.
    public let broadcastURL: URL?
    /// A PEM file with an extra certificate authority to trust, if any.
    public let caFile: String?

    /// Validates the raw settings: each URL must be an `https` URL with a host and no path; the CA file is only
    /// checked for presence here and read by the transport.
    ///
    /// - Throws: ``APNsEndpointSettingsError/invalidURL(_:variable:)`` naming the variable.
    public init(
        overrideURL: String?, channelsURL: String? = nil, broadcastURL: String? = nil, caFile: String?
    ) throws(APNsEndpointSettingsError) {
        self.caFile = caFile.flatMap { $0.isEmpty ? nil : $0 }
        self.overrideURL = try Self.baseURL(overrideURL, variable: "BLIMP_APNS_URL")
        self.channelsURL = try Self.baseURL(channelsURL, variable: "BLIMP_APNS_CHANNELS_URL")
        self.broadcastURL = try Self.baseURL(broadcastURL, variable: "BLIMP_APNS_BROADCAST_URL")
    }

    /// Apple's production and sandbox hosts, no extra trust.
    public static let apple = APNsEndpointSettings()

    private init() {
        (self.overrideURL, self.channelsURL, self.broadcastURL, self.caFile) = (nil, nil, nil, nil)
    }

    /// `raw` as a base URL, or `nil` when unset or empty.
    private static func baseURL(_ raw: String?, variable: String) throws(APNsEndpointSettingsError) -> URL? {
        guard let raw, !raw.isEmpty else { return nil }
        guard let url = URL(string: raw), url.scheme == "https", let host = url.host, !host.isEmpty,
            url.path.isEmpty || url.path == "/", url.query == nil
        else {
            throw .invalidURL(raw, variable: variable)
        }
        return url
    }

    /// The base URL of device pushes for an app in `environment`: the override when set, otherwise Apple's host.
    public func baseURL(for environment: APNsEnvironment) -> URL {
        self.overrideURL ?? environment.appleBaseURL
    }

    /// The base URL of channel management for an app in `environment`: `BLIMP_APNS_CHANNELS_URL`, else
    /// `BLIMP_APNS_URL`, else Apple's host (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
    public func channelsBaseURL(for environment: APNsEnvironment) -> URL {
        self.channelsURL ?? self.overrideURL ?? environment.appleChannelsBaseURL
    }

    /// The base URL of broadcast publishes for an app in `environment`: `BLIMP_APNS_BROADCAST_URL`, else
    /// `BLIMP_APNS_URL`, else Apple's host (unverified: docs/references.md#broadcast-publish-host).
    public func broadcastBaseURL(for environment: APNsEnvironment) -> URL {
        self.broadcastURL ?? self.overrideURL ?? environment.appleBroadcastBaseURL
    }
}

/// A bad APNs endpoint setting.
public enum APNsEndpointSettingsError: Error, Equatable, CustomStringConvertible {
    /// `variable` (`BLIMP_APNS_URL` unless said) is not an https URL with a host and no path.
    case invalidURL(String, variable: String = "BLIMP_APNS_URL")

    public var description: String {
        switch self {
        case .invalidURL(let raw, let variable):
            "\(variable) must be an https URL with a host and no path, e.g. https://127.0.0.1:2197 (got \"\(raw)\")"
        }
    }
}
