import AsyncHTTPClient
import BlimpStore
import NIOCore

/// The HTTP clients webhook deliveries go out on: one for each checked host and address
/// (``EndpointResolution/Checked``), which connects that host to that address and no other (AsyncHTTPClient's
/// `dnsOverride`, the TLS name and certificate still the host's), so a name pointed elsewhere between the check and the
/// connection (DNS rebinding) cannot take a delivery to an address nobody checked. A client serves its endpoint's
/// deliveries while the host resolves the same, keeping its connections; one no delivery has used for ``idleLimit``
/// is shut down.
actor WebhookClients {
    /// How long a client stays without a delivery.
    static let idleLimit: Duration = .seconds(60)

    private struct Entry {
        var client: HTTPClient
        var deliveries = 0
        var lastUsed = ContinuousClock.now
    }

    private var entries: [EndpointResolution.Checked: Entry] = [:]

    /// The client for `target`, made when there is none, held for a delivery until ``release(_:)``.
    func acquire(_ target: EndpointResolution.Checked) async -> HTTPClient {
        await self.shutDownIdle()
        let client = self.entries[target]?.client ?? Self.makeClient(pinning: target)
        self.entries[target, default: Entry(client: client)].deliveries += 1
        return client
    }

    /// Ends a delivery on `target`'s client.
    func release(_ target: EndpointResolution.Checked) {
        self.entries[target]?.deliveries -= 1
        self.entries[target]?.lastUsed = .now
    }

    /// Shuts every client down; deliveries are over.
    func shutDown() async {
        let clients = self.entries.values.map(\.client)
        self.entries = [:]
        for client in clients { try? await client.shutdown() }
    }

    private func shutDownIdle() async {
        let idle = self.entries.filter { $0.value.deliveries == 0 && $0.value.lastUsed.duration(to: .now) > Self.idleLimit }
        for (target, entry) in idle {
            self.entries[target] = nil
            try? await entry.client.shutdown()
        }
    }

    /// A client as deliveries need one: connecting `target`'s host to its address only, following no redirect (an
    /// endpoint could send the request anywhere).
    private static func makeClient(pinning target: EndpointResolution.Checked) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        configuration.dnsOverride = [target.host: target.address]
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
