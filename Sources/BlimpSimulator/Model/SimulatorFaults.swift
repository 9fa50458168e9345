import BlimpCore

/// Errors the simulator answers on purpose, to exercise a sender's retries. They apply only to requests that are
/// otherwise valid. Connection-level faults (GOAWAY, drops, latency) are the transport's.
public struct SimulatorFaults: Sendable, Codable, Equatable {
    /// The fraction of requests, from 0 to 1, answered 500 `InternalServerError`. Defaults to `0`.
    public var internalServerErrorFraction: Double = 0
    /// The fraction of requests, from 0 to 1, answered 503 `ServiceUnavailable`. Defaults to `0`.
    public var serviceUnavailableFraction: Double = 0
    /// The fraction of requests, from 0 to 1, answered 429 `TooManyRequests`, as APNs does to a burst at one device.
    /// Defaults to `0`.
    public var tooManyRequestsFraction: Double = 0
    /// Tokens (lower-case hex) answered 429 `TooManyRequests`, "too many requests ... to the same device token"
    /// (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns). Defaults to none.
    public var tooManyRequestsTokens: Set<String> = []

    public init(
        internalServerErrorFraction: Double = 0,
        serviceUnavailableFraction: Double = 0,
        tooManyRequestsFraction: Double = 0,
        tooManyRequestsTokens: Set<String> = []
    ) {
        self.internalServerErrorFraction = internalServerErrorFraction
        self.serviceUnavailableFraction = serviceUnavailableFraction
        self.tooManyRequestsFraction = tooManyRequestsFraction
        self.tooManyRequestsTokens = tooManyRequestsTokens
    }

    /// Reads the faults a `PUT /faults` names; those it leaves out are none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.internalServerErrorFraction = try container.decodeIfPresent(Double.self, forKey: .internalServerErrorFraction) ?? 0
        self.serviceUnavailableFraction = try container.decodeIfPresent(Double.self, forKey: .serviceUnavailableFraction) ?? 0
        self.tooManyRequestsFraction = try container.decodeIfPresent(Double.self, forKey: .tooManyRequestsFraction) ?? 0
        self.tooManyRequestsTokens = try container.decodeIfPresent(Set<String>.self, forKey: .tooManyRequestsTokens) ?? []
    }

    /// The error for a request that drew `draw` (uniform in 0..<1), if any: the fractions above, one after another.
    func drawnError(_ draw: Double) -> Rejection? {
        var bound = 0.0
        for (fraction, reason) in [
            (self.internalServerErrorFraction, APNsReason.internalServerError), (self.serviceUnavailableFraction, .serviceUnavailable),
            (self.tooManyRequestsFraction, .tooManyRequests),
        ] {
            bound += fraction
            if draw < bound { return Rejection(reason) }
        }
        return nil
    }

    /// Whether any request may draw an error.
    var drawsErrors: Bool { self.internalServerErrorFraction > 0 || self.serviceUnavailableFraction > 0 || self.tooManyRequestsFraction > 0 }
}
