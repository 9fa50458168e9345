import BlimpCore
import Foundation
import Logging
import NIOSSL
import Synchronization

/// Sends notifications to APNs over pooled HTTP/2 connections with ES256 provider tokens.
///
/// One pool per (team, key, environment): APNs binds a connection to the team and key of its first request and
/// keeps production and sandbox apart (reference: apns-live-activities.md §2.3). Each pool shares one provider token
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
        let pool = self.pool(for: key, environment: environment)
        do {
            var token = try pool.tokens.current()
            var renewed = false
            for _ in 0...Self.unprocessedRetries {
                let outcome = await (try await pool.connection()).send(request, authorization: token.authorization)
                switch outcome {
                case .notProcessed:
                    self.logger.debug("apns request not processed, sending again", metadata: Self.metadata(request))
                    continue
                case .response(.rejected(403, .some(.expiredProviderToken), _)) where !renewed:
                    guard let fresh = try pool.tokens.renew(afterRejecting: token) else { return Self.expired }
                    (token, renewed) = (fresh, true)
                case .response(let response):
                    return response
                }
            }
            return .noResponse
        } catch {
            var metadata = Self.metadata(request)
            metadata["error"] = "\(error)"
            self.logger.warning("apns request failed", metadata: metadata)
            return .noResponse
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

    /// Closes every connection.
    public func shutdown() async {
        let pools = self.pools.withLock { pools in
            defer { pools = [:] }
            return Array(pools.values)
        }
        for pool in pools { await pool.shutdown() }
    }

    /// The request's ids for a log line (the device token redacted); built only when a line is logged.
    private static func metadata(_ request: APNsRequest) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["apns.token": "\(request.deviceToken)"]
        if let apnsID = request.apnsID { metadata["apns.id"] = "\(apnsID.lowercaseString)" }
        return metadata
    }

    private static let expired = APNsResponse.rejected(status: 403, reason: .expiredProviderToken, timestamp: nil)

    private func pool(for key: APNsSigningKey, environment: APNsEnvironment) -> APNsConnectionPool {
        self.pools.withLock { pools in
            let poolKey = PoolKey(teamID: key.teamID, keyID: key.keyID, environment: environment)
            if let pool = pools[poolKey] { return pool }
            let pool = APNsConnectionPool(
                baseURL: self.configuration.endpoint.baseURL(for: environment),
                sslContext: self.sslContext,
                tokens: ProviderTokenCache(key: key, now: self.now),
                configuration: self.configuration
            )
            pools[poolKey] = pool
            return pool
        }
    }
}
