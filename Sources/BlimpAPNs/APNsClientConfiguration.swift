import BlimpCore

/// How the APNs client connects.
public struct APNsClientConfiguration: Sendable {
    /// Apple's hosts, or `BLIMP_APNS_URL` with `BLIMP_APNS_CA_FILE`.
    public var endpoint: APNsEndpointSettings
    /// The most connections per (team, key, environment). More are opened only while every open one has as many
    /// requests as it takes (see ``maxStreamsPerConnection``). Defaults to `4`.
    public var maxConnections: Int = 4
    /// The most streams one connection opens at once, below the server's `SETTINGS_MAX_CONCURRENT_STREAMS` (APNs
    /// allows 1,000). Further requests wait on the connection, in order, for a free stream. Defaults to `200`.
    public var maxStreamsPerConnection: Int = 200
    /// How long a request may take, from the moment a connection takes it, before it counts as unanswered.
    /// Defaults to 10 s.
    public var requestTimeout: Duration = .seconds(10)
    /// How long connecting may take. Defaults to 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// A connection idle this long sends a PING to stay healthy. Defaults to 60 s.
    public var pingInterval: Duration = .seconds(60)

    public init(endpoint: APNsEndpointSettings) {
        self.endpoint = endpoint
    }
}
