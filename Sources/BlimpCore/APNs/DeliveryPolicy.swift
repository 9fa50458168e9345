import Foundation

/// What to do after an APNs response.
public enum DeliveryAction: Sendable, Equatable {
    /// APNs accepted it.
    case delivered
    /// The token is dead: remove it, unless it was registered again after `since` (410's timestamp).
    case tokenInvalid(since: Date?)
    /// Try again after `delay`.
    case retry(after: Duration)
    /// Give up; `reason` says why when APNs gave one.
    case failed(APNsReason?)
}

/// The pure mapping from an APNs response to a ``DeliveryAction``, with bounded exponential backoff and jitter.
/// (The APNs client itself renews an expired provider token and retries once; what still fails arrives here.)
///
/// Apple: do not retry `BadDeviceToken`, `DeviceTokenNotForTopic`, `ExpiredToken`, `Unregistered`, `Forbidden` or
/// `PayloadTooLarge`; retry 429 "with a delay" and 5xx with back-off (docs/references.md#apns-retries).
public struct DeliveryPolicy: Sendable {
    /// Attempts in all, the first included. Defaults to `5`.
    public var maxAttempts: Int
    /// The delay before the first retry; each retry doubles it. Defaults to 1 second.
    public var baseDelay: Duration
    /// The longest delay. Defaults to 60 seconds.
    public var maxDelay: Duration

    public init(maxAttempts: Int = 5, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(60)) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The action for `response` to attempt number `attempt` (1 for the first).
    ///
    /// - Parameter jitter: a number in `0..<1` that spreads retries: the delay is scaled into 50–100 % of its
    ///   exponential value, so that many tokens failing together do not retry together. Drawn only for a retry.
    public func action(for response: APNsResponse, attempt: Int, jitter: @autoclosure () -> Double) -> DeliveryAction {
        switch response {
        case .accepted:
            return .delivered
        case .rejected(_, .some(let reason), let timestamp) where Self.invalidTokenReasons.contains(reason):
            return .tokenInvalid(since: timestamp)
        case .rejected(let status, let reason, _) where Self.retriedStatuses.contains(status):
            return self.retry(attempt: attempt, jitter: jitter, otherwise: .failed(reason))
        case .rejected(_, let reason, _):
            return .failed(reason)
        case .noResponse:
            return self.retry(attempt: attempt, jitter: jitter, otherwise: .failed(nil))
        }
    }

    /// The reasons that mean the token will never work again.
    public static let invalidTokenReasons: Set<APNsReason> = [
        .unregistered, .expiredToken, .badDeviceToken, .deviceTokenNotForTopic,
    ]

    /// Statuses worth retrying: too many requests, server errors, unavailable.
    public static let retriedStatuses: Set<Int> = [429, 500, 503]

    private func retry(attempt: Int, jitter: () -> Double, otherwise: DeliveryAction) -> DeliveryAction {
        guard attempt < self.maxAttempts else { return otherwise }
        let exponential = self.baseDelay * (1 << min(attempt - 1, 30))
        let capped = min(exponential, self.maxDelay)
        return .retry(after: capped * (0.5 + 0.5 * min(max(jitter(), 0), 1)))
    }
}
