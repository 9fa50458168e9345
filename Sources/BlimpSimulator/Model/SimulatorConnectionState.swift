import BlimpCore

/// What the simulator remembers about one HTTP/2 connection between its requests. The transport keeps one per
/// connection and passes it to every ``SimulatedAPNs/handle(_:connection:)`` call on that connection.
public struct SimulatorConnectionState: Sendable {
    /// Whether a request with a valid provider token has been seen; APNs allows one stream until then.
    public internal(set) var hasValidProviderToken = false
    /// Makes the `apns-id` of requests that carry none.
    var ids = APNsIDGenerator()
    /// The `authorization` value in use, and what its token was verified to say: requests that repeat it (nearly
    /// all of them) skip verification.
    private var authorization: String?
    private var token: VerifiedProviderToken?
    /// When the connection bound its first token or last switched tokens, in seconds since the epoch.
    private var tokenSince: Double = 0

    /// How soon a connection may switch to a new token: "no more than once every 20 minutes" (see
    /// https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
    static let tokenUpdateInterval: Double = 20 * 60

    public init() {}

    /// The token already in use when `authorization` repeats it.
    func currentToken(ifSentAs authorization: String) -> VerifiedProviderToken? {
        self.authorization == authorization ? self.token : nil
    }

    /// Makes `token`, sent as `authorization`, the connection's token.
    ///
    /// The first token binds its team and key to the connection (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
    /// - Throws: 403 `InvalidProviderToken` for another team, 403 `UnrelatedKeyIdInToken` for another key, 429
    ///   `TooManyProviderTokenUpdates` for a switch within 20 minutes of the last (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns; https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    mutating func use(_ token: VerifiedProviderToken, sentAs authorization: String, now: Double) throws(Rejection) {
        if let bound = self.token {
            guard token.teamID == bound.teamID else { throw Rejection(.invalidProviderToken) }
            guard token.keyID == bound.keyID else { throw Rejection(.unrelatedKeyIdInToken) }
            guard now - self.tokenSince >= Self.tokenUpdateInterval else {
                throw Rejection(.tooManyProviderTokenUpdates)
            }
        }
        self.authorization = authorization
        self.token = token
        self.tokenSince = now
    }
}
