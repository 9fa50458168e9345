import BlimpCore
import Foundation
import NIOCore
import NIOSSL
import Synchronization

/// The connections to one APNs endpoint for one (team, key, environment), sharing one provider token.
///
/// Requests go to the open connection with the fewest streams in flight. While every connection is at the server's
/// stream limit, another is opened, up to ``APNsClientConfiguration/maxConnections``; beyond that NIOHTTP2 queues
/// streams on the connection until the server allows more. Closed connections leave the pool.
final class APNsConnectionPool: Sendable {
    let tokens: ProviderTokenCache
    private let baseURL: URL
    private let sslContext: NIOSSLContext
    private let configuration: APNsClientConfiguration
    private let state = Mutex(State())

    private struct State {
        var connections: [ObjectIdentifier: APNsConnection] = [:]
        var connecting: Task<APNsConnection, any Error>?
        var isShutDown = false
    }

    init(baseURL: URL, sslContext: NIOSSLContext, tokens: ProviderTokenCache, configuration: APNsClientConfiguration) {
        self.baseURL = baseURL
        self.sslContext = sslContext
        self.tokens = tokens
        self.configuration = configuration
    }

    /// A connection to send on, opening one when needed.
    func connection() async throws -> APNsConnection {
        enum Choice {
            case use(APNsConnection)
            case wait(Task<APNsConnection, any Error>)
        }
        let choice: Choice = try self.state.withLock { state in
            guard !state.isShutDown else { throw CancellationError() }
            let open = state.connections.values.filter { !$0.load.isClosing.load(ordering: .relaxed) }
            let leastLoaded = open.min { $0.load.inFlight.load(ordering: .relaxed) < $1.load.inFlight.load(ordering: .relaxed) }
            if let leastLoaded, leastLoaded.load.hasCapacity {
                return .use(leastLoaded)
            }
            let connecting = state.connecting ?? (open.count < self.configuration.maxConnections ? self.startConnecting(&state) : nil)
            if let leastLoaded { return .use(leastLoaded) }
            return .wait(connecting ?? self.startConnecting(&state))
        }
        switch choice {
        case .use(let connection): return connection
        case .wait(let task): return try await task.value
        }
    }

    /// The open connections' stream limits and loads.
    func statuses() -> [APNsClient.ConnectionStatus] {
        self.state.withLock { state in
            state.connections.values.filter { !$0.load.isClosing.load(ordering: .relaxed) }.map {
                APNsClient.ConnectionStatus(
                    streamLimit: $0.load.streamLimit.load(ordering: .relaxed),
                    inFlight: $0.load.inFlight.load(ordering: .relaxed)
                )
            }
        }
    }

    /// Closes every connection.
    func shutdown() async {
        let connections = self.state.withLock { state in
            state.isShutDown = true
            return Array(state.connections.values)
        }
        for connection in connections { await connection.close() }
    }

    private func startConnecting(_ state: inout State) -> Task<APNsConnection, any Error> {
        let task = Task {
            defer { self.state.withLock { $0.connecting = nil } }
            let connection = try await APNsConnection.connect(to: self.baseURL, sslContext: self.sslContext, configuration: self.configuration)
            let id = ObjectIdentifier(connection)
            self.state.withLock { $0.connections[id] = connection }
            connection.closed.whenComplete { _ in self.state.withLock { _ = $0.connections.removeValue(forKey: id) } }
            return connection
        }
        state.connecting = task
        return task
    }
}
