import BlimpCore

/// How the APNs client connects.
public struct APNsClientConfiguration: Sendable {
    /// Apple's hosts, or `BLIMP_APNS_URL` with `BLIMP_APNS_CA_FILE`.
    public var endpoint: APNsEndpointSettings
    /// The most connections per (team, key, environment). More are opened only while every open one has as many
    /// streams in flight as the server allows. Defaults to `4`.
    public var maxConnections: Int = 4
    /// How long a request may take, from the moment it is written, before it counts as unanswered. Defaults to 10 s.
    public var requestTimeout: Duration = .seconds(10)
    /// How long connecting may take. Defaults to 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// A connection idle this long sends a PING to stay healthy. Defaults to 60 s.
    public var pingInterval: Duration = .seconds(60)

    public init(endpoint: APNsEndpointSettings) {
        self.endpoint = endpoint
    }
}
