import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// One HTTP/2 connection to APNs over TLS.
final class APNsConnection: Sendable {
    let load: ConnectionLoad
    private let channel: any Channel
    private let handler: NIOLoopBound<APNsConnectionHandler>

    private init(channel: any Channel, handler: NIOLoopBound<APNsConnectionHandler>, load: ConnectionLoad) {
        self.channel = channel
        self.handler = handler
        self.load = load
    }

    /// Connects to `baseURL` (host and port) with TLS and ALPN `h2`.
    static func connect(
        to baseURL: URL,
        sslContext: NIOSSLContext,
        configuration: APNsClientConfiguration
    ) async throws -> APNsConnection {
        guard let host = baseURL.host else { throw APNsClientError.invalidURL }
        let port = baseURL.port ?? 443
        let load = ConnectionLoad()
        let authority = baseURL.port.map { "\(host):\($0)" } ?? host
        let serverHostname = host.isIPAddress ? nil : host
        let timeout = TimeAmount(configuration.requestTimeout)
        let ping = TimeAmount(configuration.pingInterval)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                    try pipeline.addHandler(IdleStateHandler(allTimeout: ping))
                    try pipeline.addHandler(APNsConnectionHandler(
                            authority: authority,
                            requestTimeout: timeout,
                            maxStreams: configuration.maxStreamsPerConnection,
                            load: load
                        ))
                }
            }
            .connect(host: host, port: port)
            .get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return APNsConnection(channel: channel, handler: handler, load: load)
    }

    /// Sends `requests`, each on a new stream; their outcomes come back in order. They count in ``load`` from now
    /// on, so the pool sees them before the event loop takes them.
    func send(_ requests: [APNsRequest], authorization: String) async -> [StreamOutcome] {
        let handler = self.handler
        self.load.inFlight.add(requests.count, ordering: .relaxed)
        // The handler always resumes: with answers, timeouts, the connection's end, or at once when the
        // connection no longer takes requests.
        return await withUnsafeContinuation { continuation in
            self.channel.eventLoop.execute {
                handler.value.send(requests, authorization: authorization, continuation: continuation)
            }
        }
    }

    /// Resolves when the connection has closed.
    var closed: EventLoopFuture<Void> { self.channel.closeFuture }

    func close() async {
        try? await self.channel.close()
    }
}

extension String {
    /// Whether this is an IPv4 or IPv6 literal (TLS sends no server name for those).
    fileprivate var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
