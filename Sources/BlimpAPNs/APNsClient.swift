import BlimpCore
import Foundation
import Logging
import NIOSSL
import Synchronization

/// Sends notifications to APNs over pooled HTTP/2 connections with ES256 provider tokens.
///
/// One pool per (team, key, environment): APNs binds a connection to the team and key of its first request and
/// keeps production and sandbox apart (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns). Each pool shares one provider token
/// among its connections. A request that APNs certainly did not process (GOAWAY, refused stream) is sent again on
/// another connection; a 403 `ExpiredProviderToken` renews the token and retries once.
public final class APNsClient: Sendable {
    private let configuration: APNsClientConfiguration
    private let sslContext: NIOSSLContext
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let pools = Mutex<[PoolKey: APNsConnectionPool]>([:])

    private struct PoolKey: Hashable {
        var teamID: String
        var keyID: String
        var environment: APNsEnvironment
    }

    /// How many times a request APNs did not process is sent again.
    static let unprocessedRetries = 10

    /// - Parameter now: the clock for provider tokens; tests inject their own.
    public init(
        configuration: APNsClientConfiguration,
        logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        if let caFile = configuration.endpoint.caFile {
            do {
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
            } catch {
                throw APNsClientError.unreadableCAFile(caFile)
            }
        }
        self.sslContext = try NIOSSLContext(configuration: tls)
        self.configuration = configuration
        self.logger = logger
        self.now = now
    }

    /// Sends `request` for an app whose tokens live in `environment`, signing with `key`.
    public func send(_ request: APNsRequest, key: APNsSigningKey, environment: APNsEnvironment) async -> APNsResponse {
        await self.send([request], key: key, environment: environment)[0]
    }

    /// Sends `requests` for an app whose tokens live in `environment`, signing with `key`; their responses come back
    /// in the same order. They are handed to the pool's connections in slices of a connection's stream limit, each
    /// slice in one go (no task per request); what APNs did not process goes out again on another connection.
    public func send(_ requests: [APNsRequest], key: APNsSigningKey, environment: APNsEnvironment) async -> [APNsResponse] {
        let pool = self.pool(for: key, environment: environment)
        var responses = [APNsResponse](repeating: .noResponse, count: requests.count)
        var pending = Array(requests.indices)
        do {
            var token = try pool.tokens.current()
            var renewed = false
            for _ in 0...Self.unprocessedRetries where !pending.isEmpty {
                var again: [Int] = []
                var expired: [Int] = []
                for (index, outcome) in await self.sendOnce(pending, of: requests, authorization: token.authorization, pool: pool) {
                    switch outcome {
                    case .notProcessed: again.append(index)
                    case .response(.rejected(403, .some(.expiredProviderToken), _)) where !renewed: expired.append(index)
                    case .response(let response): responses[index] = response
                    }
                }
                if !again.isEmpty { self.logger.debug("apns requests not processed, sending again", metadata: ["count": "\(again.count)"]) }
                if !expired.isEmpty {
                    guard let fresh = try pool.tokens.renew(afterRejecting: token) else {
                        for index in expired { responses[index] = Self.expired }
                        pending = again
                        continue
                    }
                    (token, renewed) = (fresh, true)
                }
                pending = again + expired
            }
        } catch {
            self.logger.warning("apns requests failed", metadata: ["count": "\(pending.count)", "error": "\(error)"])
        }
        APNsMetrics.count(responses)
        return responses
    }

    /// One round: `indices` of `requests` in slices over the pool's connections (one slice needs no task of its
    /// own), and what became of each.
    private func sendOnce(
        _ indices: [Int], of requests: [APNsRequest], authorization: String, pool: APNsConnectionPool
    ) async -> [(Int, StreamOutcome)] {
        let size = self.configuration.maxStreamsPerConnection
        let slices = stride(from: 0, to: indices.count, by: size).map { Array(indices[$0..<min($0 + size, indices.count)]) }
        guard slices.count > 1 else { return await self.send(slices[0], of: requests, authorization: authorization, pool: pool) }
        return await withTaskGroup(of: [(Int, StreamOutcome)].self) { group in
            for slice in slices {
                group.addTask { await self.send(slice, of: requests, authorization: authorization, pool: pool) }
            }
            var outcomes: [(Int, StreamOutcome)] = []
            for await answered in group { outcomes += answered }
            return outcomes
        }
    }

    /// One slice of requests on the pool's least loaded connection.
    private func send(
        _ slice: [Int], of requests: [APNsRequest], authorization: String, pool: APNsConnectionPool
    ) async -> [(Int, StreamOutcome)] {
        do {
            let connection = try await pool.connection()
            return Array(zip(slice, await connection.send(slice.map { requests[$0] }, authorization: authorization)))
        } catch {
            self.logger.warning("apns requests failed", metadata: ["count": "\(slice.count)", "error": "\(error)"])
            return slice.map { ($0, .response(.noResponse)) }
        }
    }

    /// One open connection as the client sees it.
    public struct ConnectionStatus: Sendable, Equatable {
        /// The server's current `SETTINGS_MAX_CONCURRENT_STREAMS` (APNs: 1 until a valid provider token), capped by
        /// ``APNsClientConfiguration/maxStreamsPerConnection``.
        public var streamLimit: Int
        /// Requests on a stream or waiting for one, not yet answered.
        public var inFlight: Int
    }

    /// The open connections of every pool, for metrics and tests.
    public func connectionStatuses() -> [ConnectionStatus] {
        self.pools.withLock { Array($0.values) }.flatMap { $0.statuses() }
    }

    /// Sets `blimp_apns_connections` and `blimp_apns_streams` to the open connections and their requests in flight
    /// (a scrape calls it).
    public func recordConnectionMetrics() {
        let statuses = self.connectionStatuses()
        APNsMetrics.connections.record(statuses.count)
        APNsMetrics.streams.record(statuses.reduce(0) { $0 + $1.inFlight })
    }

    /// Closes every connection.
    public func shutdown() async {
        let pools = self.pools.withLock { pools in
            defer { pools = [:] }
            return Array(pools.values)
        }
        for pool in pools { await pool.shutdown() }
    }

    private static let expired = APNsResponse.rejected(status: 403, reason: .expiredProviderToken, timestamp: nil)

    private func pool(for key: APNsSigningKey, environment: APNsEnvironment) -> APNsConnectionPool {
        self.pools.withLock { pools in
            let poolKey = PoolKey(teamID: key.teamID, keyID: key.keyID, environment: environment)
            if let pool = pools[poolKey] { return pool }
            let pool = APNsConnectionPool(
                baseURL: self.configuration.endpoint.baseURL(for: environment),
                sslContext: self.sslContext,
                tokens: ProviderTokenCache(key: key, now: self.now, signed: { APNsMetrics.providerTokensSigned.increment() }),
                configuration: self.configuration
            )
            pools[poolKey] = pool
            return pool
        }
    }
}
