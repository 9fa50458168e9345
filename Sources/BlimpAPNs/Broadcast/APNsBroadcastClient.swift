import AsyncHTTPClient
import BlimpCore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Synchronization

/// APNs's broadcast APIs for iOS 18 broadcast channels: channel management (``APNsBroadcastChannels``) and publishing
/// (``APNsBroadcastPublishing``), over HTTP/2 and TLS with the same ES256 provider tokens as device pushes
/// (docs/references.md#broadcast-channels).
///
/// Requests are few (a channel per event, a publish per update), so they go through AsyncHTTPClient, which speaks
/// HTTP/2 once ALPN agrees on it and keeps a connection per host; device pushes keep ``APNsClient``'s own lean
/// connections. Hosts come from ``APNsEndpointSettings`` (`BLIMP_APNS_CHANNELS_URL`, `BLIMP_APNS_BROADCAST_URL`),
/// and `BLIMP_APNS_CA_FILE` is trusted as for device pushes. One provider token is kept per (team, key, environment);
/// a 403 `ExpiredProviderToken` renews it and tries once more. Errors never carry the token.
public final class APNsBroadcastClient: APNsBroadcastChannels, APNsBroadcastPublishing {
    private let endpoint: APNsEndpointSettings
    private let http: HTTPClient
    private let requestTimeout: Duration
    private let logger: Logger
    private let now: @Sendable () -> Date
    private let tokens = Mutex<[TokenKey: ProviderTokenCache]>([:])

    private struct TokenKey: Hashable {
        var teamID: String
        var keyID: String
        var environment: APNsEnvironment
    }

    /// The largest answer body read (a list of 10,000 channel ids fits).
    private static let maxResponseBytes = 4 << 20

    /// - Parameters:
    ///   - endpoint: the hosts and the extra CA (`BLIMP_APNS_*`).
    ///   - requestTimeout: how long one request may take, connecting included. Defaults to 10 s.
    ///   - now: the clock for provider tokens; tests inject their own.
    /// - Throws: ``APNsClientError/unreadableCAFile(_:)``.
    public init(
        endpoint: APNsEndpointSettings,
        requestTimeout: Duration = .seconds(10),
        logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let caFile = endpoint.caFile {
            do {
                tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
            } catch {
                throw APNsClientError.unreadableCAFile(caFile)
            }
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, timeout: .init(connect: TimeAmount(requestTimeout)))
        configuration.httpVersion = .automatic
        self.http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.endpoint = endpoint
        self.requestTimeout = requestTimeout
        self.logger = logger
        self.now = now
    }

    /// Closes the connections. The client takes no requests afterwards.
    public func shutdown() async {
        try? await self.http.shutdown()
    }

    // MARK: Channel management (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns)

    public func create(
        storagePolicy: APNsMessageStoragePolicy, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async throws(APNsBroadcastError) -> String {
        let body = #"{"message-storage-policy":\#(storagePolicy.rawValue),"push-type":"LiveActivity"}"#
        let answer = try await self.channelRequest(.POST, "channels", bundleID: bundleID, key: key, environment: environment, body: Array(body.utf8))
        // Apple documents 201; a user reported 200 (docs/references.md#broadcast-channels). Either carries the id in the header.
        guard answer.status == 201 || answer.status == 200, let channelID = answer.headers.first(name: "apns-channel-id"), !channelID.isEmpty else {
            throw answer.unexpected
        }
        return channelID
    }

    public func storagePolicy(
        of channelID: String, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async throws(APNsBroadcastError) -> APNsMessageStoragePolicy {
        let answer = try await self.channelRequest(
            .GET, "channels", bundleID: bundleID, key: key, environment: environment, channelID: channelID)
        guard answer.status == 200, let settings = try? JSONDecoder().decode(ChannelSettings.self, from: Data(answer.body)) else {
            throw answer.unexpected
        }
        return settings.messageStoragePolicy
    }

    public func delete(
        _ channelID: String, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async throws(APNsBroadcastError) {
        let answer = try await self.channelRequest(
            .DELETE, "channels", bundleID: bundleID, key: key, environment: environment, channelID: channelID)
        // Apple documents 204; any success will do.
        guard (200..<300).contains(answer.status) else { throw answer.unexpected }
    }

    public func list(bundleID: String, key: APNsSigningKey, environment: APNsEnvironment) async throws(APNsBroadcastError) -> [String] {
        let answer = try await self.channelRequest(.GET, "all-channels", bundleID: bundleID, key: key, environment: environment)
        guard answer.status == 200, let list = try? JSONDecoder().decode(ChannelList.self, from: Data(answer.body)) else {
            throw answer.unexpected
        }
        return list.channels
    }

    /// A channel's read body: `{"message-storage-policy": n, "push-type": "LiveActivity"}`.
    private struct ChannelSettings: Decodable {
        var messageStoragePolicy: APNsMessageStoragePolicy

        enum CodingKeys: String, CodingKey {
            case messageStoragePolicy = "message-storage-policy"
        }
    }

    /// The list body: `{"channels": [ids]}`.
    private struct ChannelList: Decodable {
        var channels: [String]
    }

    /// One channel-management request to `/1/apps/{bundle-id}/{resource}`; an answer is any status, no answer throws.
    private func channelRequest(
        _ method: HTTPMethod, _ resource: String, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment,
        channelID: String? = nil, body: [UInt8] = []
    ) async throws(APNsBroadcastError) -> Answer {
        var headers: [(String, String)] = []
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        if !body.isEmpty { headers.append(("content-type", "application/json")) }
        let url = self.endpoint.channelsBaseURL(for: environment).appending(path: "1/apps/\(bundleID)/\(resource)")
        guard let answer = await self.send(method, url, headers: headers, body: body, requestID: UUID(), key: key, environment: environment) else {
            throw .noResponse
        }
        return answer
    }

    // MARK: Publishing (https://developer.apple.com/documentation/usernotifications/sending-broadcast-push-notification-requests-to-apns)

    public func publish(
        _ broadcast: APNsBroadcastRequest, bundleID: String, key: APNsSigningKey, environment: APNsEnvironment
    ) async -> APNsResponse {
        let requestID = broadcast.requestID ?? UUID()
        let headers = [
            ("apns-channel-id", broadcast.channelID),
            ("apns-push-type", "liveactivity"),
            ("apns-priority", "\(broadcast.priority.rawValue)"),
            ("apns-expiration", "\(broadcast.expiration)"),
            ("content-type", "application/json"),
        ]
        // The bare bundle id: a push-type suffix is refused with TopicDisallowed (docs/references.md#broadcast-channels).
        let url = self.endpoint.broadcastBaseURL(for: environment).appending(path: "4/broadcasts/apps/\(bundleID)")
        guard let answer = await self.send(
            .POST, url, headers: headers, body: broadcast.payload, requestID: requestID, key: key, environment: environment)
        else {
            return .noResponse
        }
        guard answer.status == 200 else { return .rejected(status: answer.status, body: answer.body) }
        return .accepted(apnsID: answer.headers.first(name: "apns-request-id") ?? requestID.uuidString.lowercased())
    }

    // MARK: Transport

    /// What came back: status, headers and body.
    private struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]

        /// The error for an answer that is not the success expected: APNs's status and reason, or, for a success
        /// without what it promises (no channel id, an unreadable body), that status with no reason.
        var unexpected: APNsBroadcastError {
            .rejected(status: self.status, reason: self.reason)
        }

        /// The `reason` of APNs's error body, if it has one.
        var reason: APNsReason? {
            guard case .rejected(_, let reason, _) = APNsResponse.rejected(status: self.status, body: self.body) else { return nil }
            return reason
        }

        /// 403 `ExpiredProviderToken`: the token is renewed and the request sent once more.
        var isExpiredProviderToken: Bool {
            self.status == 403 && self.reason == .expiredProviderToken
        }
    }

    /// Sends one signed request, renewing the provider token once after `ExpiredProviderToken`; `nil` when no
    /// answer came (logged; transport and signing errors never include the request's headers).
    private func send(
        _ method: HTTPMethod, _ url: URL, headers: [(String, String)], body: [UInt8], requestID: UUID,
        key: APNsSigningKey, environment: APNsEnvironment
    ) async -> Answer? {
        let tokens = self.tokenCache(for: key, environment: environment)
        do {
            var token = try tokens.current()
            var answer = try await self.execute(method, url, headers: headers, body: body, requestID: requestID, token: token)
            if answer.isExpiredProviderToken, let fresh = try tokens.renew(afterRejecting: token) {
                token = fresh
                answer = try await self.execute(method, url, headers: headers, body: body, requestID: requestID, token: token)
            }
            return answer
        } catch {
            self.logger.warning("apns broadcast request failed", metadata: [
                "apns.url": "\(url.absoluteString)", "apns.request_id": "\(requestID.uuidString.lowercased())",
                "error": "\(error)",
            ])
            return nil
        }
    }

    private func execute(
        _ method: HTTPMethod, _ url: URL, headers: [(String, String)], body: [UInt8], requestID: UUID, token: ProviderToken
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        request.headers.add(name: "authorization", value: token.authorization)
        request.headers.add(name: "apns-request-id", value: requestID.uuidString.lowercased())
        request.headers.add(contentsOf: headers)
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await self.http.execute(request, timeout: TimeAmount(self.requestTimeout), logger: self.logger)
        let bytes = try await response.body.collect(upTo: Self.maxResponseBytes)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Array(bytes.readableBytesView))
    }

    private func tokenCache(for key: APNsSigningKey, environment: APNsEnvironment) -> ProviderTokenCache {
        self.tokens.withLock { caches in
            let tokenKey = TokenKey(teamID: key.teamID, keyID: key.keyID, environment: environment)
            if let cache = caches[tokenKey] { return cache }
            let cache = ProviderTokenCache(key: key, now: self.now, signed: { APNsMetrics.providerTokensSigned.increment() })
            caches[tokenKey] = cache
            return cache
        }
    }
}
