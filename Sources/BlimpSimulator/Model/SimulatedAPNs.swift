import BlimpCore
import Foundation
import Synchronization

/// The simulated APNs service: validates each request as APNs does and simulates the devices behind the tokens.
/// Shared by every connection; thread-safe.
///
/// ``handle(_:connection:)`` runs on the transport's event loops for every request. It verifies a provider token's
/// signature once (then remembers it, per connection and across connections) and takes the device lock once.
public final class SimulatedAPNs: Sendable {
    /// The settings it started with.
    public let configuration: SimulatorConfiguration
    let now: @Sendable () -> Date
    let verifier: ProviderTokenVerifier
    let registry: Mutex<DeviceRegistry>

    /// A simulator with no trusted keys, no faults and every token active.
    ///
    /// - Parameters:
    ///   - configuration: Budgets, history sizes and allowed bundle ids.
    ///   - now: The clock, for provider-token ages, budgets, 410 timestamps and arrival times. Defaults to the
    ///     system clock.
    ///   - random: Draws the fractions of server errors. Defaults to the system's generator.
    public init(
        configuration: SimulatorConfiguration = SimulatorConfiguration(),
        now: @escaping @Sendable () -> Date = Date.init,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.configuration = configuration
        self.now = now
        self.verifier = ProviderTokenVerifier(cacheSize: configuration.providerTokenCacheSize)
        self.registry = Mutex(DeviceRegistry(configuration: configuration, random: random))
    }

    /// Answers one request as APNs would, and hands an accepted push to the simulated device.
    ///
    /// The checks run in an order close to Apple's (docs/references.md#simulator-fidelity; Apple's
    /// exact precedence is unconfirmed): method, path and token, duplicate headers, `apns-id`, provider token,
    /// topic, push type, priority, expiration, collapse id, payload; then, for a valid push, drawn server errors,
    /// the token's state and per-token 429s. In the sandbox a 200 carries `apns-unique-id` (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    ///
    /// Any path outside `/3/` is a broadcast channel's or publish's (``handleBroadcast(_:connection:)``).
    public func handle(_ request: SimulatorRequest, connection: inout SimulatorConnectionState) -> SimulatorResponse {
        guard request.path.utf8.starts(with: Self.devicePushPrefix) else {
            return self.handleBroadcast(request, connection: &connection)
        }
        var response = self.handleDevicePush(request, connection: &connection)
        if response.status == 200, self.configuration.environment == .sandbox {
            response.uniqueID = connection.ids.next().lowercaseString
        }
        return response
    }

    private static let devicePushPrefix = "/3/".utf8

    private func handleDevicePush(_ request: SimulatorRequest, connection: inout SimulatorConnectionState) -> SimulatorResponse {
        let now = self.now()
        let headers = PushHeaders(request.headers)
        let echoedID = headers.apnsID.flatMap(APNsID.echo)
        let apnsID = echoedID ?? connection.ids.next().lowercaseString
        do throws(Rejection) {
            let token = try self.validateRoute(request, headers)
            guard headers.apnsID == nil || echoedID != nil else { throw Rejection(.badMessageId) }
            try self.authenticate(headers.authorization, connection: &connection, now: now.timeIntervalSince1970)
            let (pushType, priority) = try self.validateTopic(headers)
            let expiration = try Self.expiration(headers.expiration)
            // A collapse id is at most 64 bytes (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns).
            guard headers.collapseID.map({ $0.utf8.count <= 64 }) ?? true else { throw Rejection(.badCollapseId) }
            let liveActivity = try PushPayload.validate(request.body, for: pushType)
            let delivery = SimulatedDelivery(
                apnsID: apnsID,
                pushType: pushType,
                topic: headers.topic ?? "",
                priority: priority,
                expiration: expiration,
                collapseID: headers.collapseID,
                payload: String(decoding: request.body, as: UTF8.self),
                arrivedAt: now,
                outcome: .displayed
            )
            return self.registry.withLock {
                $0.deliver(delivery, to: token.hex, liveActivity: liveActivity, now: now.timeIntervalSince1970)
            }
        } catch {
            return self.registry.withLock { $0.reject(error, apnsID: apnsID) }
        }
    }

    /// Method, path and duplicate headers (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns; https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    private func validateRoute(_ request: SimulatorRequest, _ headers: PushHeaders) throws(Rejection) -> DeviceToken {
        guard request.method == "POST" else { throw Rejection(.methodNotAllowed) }
        let token = try DevicePath.token(in: request.path)
        guard !headers.hasDuplicates else { throw Rejection(.duplicateHeaders) }
        return token
    }

    /// The provider token: present, verified, no more than an hour old, and acceptable on this connection
    /// (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns; https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    func authenticate(
        _ authorization: String?,
        connection: inout SimulatorConnectionState,
        now: Double
    ) throws(Rejection) {
        guard let authorization, !authorization.isEmpty else { throw Rejection(.missingProviderToken) }
        let current = connection.currentToken(ifSentAs: authorization)
        let token: VerifiedProviderToken
        if let current {
            token = current
        } else {
            token = try self.verify(authorization)
        }
        guard now - token.issuedAt <= Self.providerTokenLifetime else { throw Rejection(.expiredProviderToken) }
        if current == nil { try connection.use(token, sentAs: authorization, now: now) }
        connection.hasValidProviderToken = true
    }

    /// Verifies the JWT in a `bearer <jwt>` authorization (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns).
    ///
    /// - Throws: 403 `MissingProviderToken` for a bearer with no token, 403 `InvalidProviderToken` for another
    ///   scheme or a token that fails verification.
    private func verify(_ authorization: String) throws(Rejection) -> VerifiedProviderToken {
        guard authorization.lowercased().hasPrefix("bearer") else { throw Rejection(.invalidProviderToken) }
        let jwt = authorization.dropFirst(6).drop(while: \.isWhitespace)
        guard !jwt.isEmpty else { throw Rejection(.missingProviderToken) }
        return try self.verifier.verify(jwt)
    }

    /// An `iat` more than an hour old gives 403 `ExpiredProviderToken` (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
    static let providerTokenLifetime: Double = 60 * 60

    /// `apns-topic`, `apns-push-type` and `apns-priority`, and whether they agree (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns; https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    private func validateTopic(_ headers: PushHeaders) throws(Rejection) -> (SimulatedPushType, Int) {
        guard let topic = headers.topic, !topic.isEmpty else { throw Rejection(.missingTopic) }
        let pushType = try SimulatedPushType(header: headers.pushType)
        let bundleID = try pushType.bundleID(inTopic: topic)
        if let allowed = self.configuration.allowedBundleIDs, !allowed.contains(String(bundleID)) {
            throw Rejection(.topicDisallowed)
        }
        return (pushType, try pushType.priority(header: headers.priority))
    }

    /// `apns-expiration`: epoch seconds, or 0 for one attempt (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns).
    private static func expiration(_ header: String?) throws(Rejection) -> Int64? {
        guard let header else { return nil }
        guard let expiration = Int64(header), expiration >= 0 else { throw Rejection(.badExpirationDate) }
        return expiration
    }
}
