import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// The simulator's APNs endpoint: HTTP/2 over TLS (ALPN `h2`) on `host`:`port`, serving ``SimulatedAPNs``.
public final class SimulatorServer: Service, Sendable {
    private let host: String
    private let port: Int
    private let tlsConfiguration: TLSConfiguration
    private let apns: SimulatedAPNs
    private let settings: SharedConnectionSettings
    private let logger: Logger
    private let onListening: @Sendable (Int) -> Void

    /// - Parameter onListening: called with the bound port once the server listens (useful with port `0`).
    public init(
        host: String,
        port: Int,
        tls: SimulatorTLS,
        apns: SimulatedAPNs,
        settings: SharedConnectionSettings,
        logger: Logger,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) throws {
        self.host = host
        self.port = port
        self.tlsConfiguration = try tls.serverConfiguration()
        self.apns = apns
        self.settings = settings
        self.logger = logger
        self.onListening = onListening
    }

    /// Listens until graceful shutdown or cancellation.
    public func run() async throws {
        let sslContext = try NIOSSLContext(configuration: self.tlsConfiguration)
        let (apns, settings) = (self.apns, self.settings)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                    try pipeline.addHandler(SimulatorConnectionHandler(apns: apns, settings: settings))
                }
            }
            .bind(host: self.host, port: self.port)
            .get()
        let port = channel.localAddress?.port ?? self.port
        self.logger.info("APNs simulator listening", metadata: ["apns_sim.address": "https://\(self.host):\(port)"])
        self.onListening(port)
        try await withTaskCancellationOrGracefulShutdownHandler {
            try await channel.closeFuture.get()
        } onCancelOrGracefulShutdown: {
            channel.close(promise: nil)
        }
    }
}
