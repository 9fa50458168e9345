import BlimpCore
import Foundation
import NIOCore
import NIOSSL
import Synchronization

/// The connections to one APNs endpoint for one (team, key, environment), sharing one provider token.
///
/// Requests go to the open connection with the fewest requests in flight. While every connection is at its stream
/// limit, another is opened, up to ``APNsClientConfiguration/maxConnections``; beyond that requests wait on the
/// connections for a free stream. Closed connections leave the pool.
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

        /// The connections that still take new requests.
        var open: [APNsConnection] {
            self.connections.values.filter { !$0.load.isClosing.load(ordering: .relaxed) }
        }
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
            let open = state.open
            let leastLoaded = open.min { $0.load.inFlight.load(ordering: .relaxed) < $1.load.inFlight.load(ordering: .relaxed) }
            if let leastLoaded, leastLoaded.load.hasCapacity {
                return .use(leastLoaded)
            }
            // Every connection is at the server's limit, or there is none: open one more (one at a time).
            if state.connecting == nil, leastLoaded == nil || open.count < self.configuration.maxConnections {
                state.connecting = self.startConnecting()
            }
            if let leastLoaded { return .use(leastLoaded) }
            return .wait(state.connecting!)
        }
        switch choice {
        case .use(let connection): return connection
        case .wait(let task): return try await task.value
        }
    }

    /// The open connections' stream limits and loads.
    func statuses() -> [APNsClient.ConnectionStatus] {
        self.state.withLock { state in
            state.open.map {
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

    /// Connects in the background; the caller records the task as `connecting` under the lock.
    private func startConnecting() -> Task<APNsConnection, any Error> {
        Task {
            defer { self.state.withLock { $0.connecting = nil } }
            let connection = try await APNsConnection.connect(to: self.baseURL, sslContext: self.sslContext, configuration: self.configuration)
            let id = ObjectIdentifier(connection)
            self.state.withLock { $0.connections[id] = connection }
            connection.closed.whenComplete { _ in self.state.withLock { _ = $0.connections.removeValue(forKey: id) } }
            return connection
        }
    }
}
