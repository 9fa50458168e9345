/// Errors the simulator answers on purpose, to exercise a sender's retries. They apply only to requests that are
/// otherwise valid. Connection-level faults (GOAWAY, drops, latency) are the transport's.
public struct SimulatorFaults: Sendable, Codable, Equatable {
    /// The fraction of requests, from 0 to 1, answered 500 `InternalServerError`. Defaults to `0`.
    public var internalServerErrorFraction: Double = 0
    /// The fraction of requests, from 0 to 1, answered 503 `ServiceUnavailable`. Defaults to `0`.
    public var serviceUnavailableFraction: Double = 0
    /// Tokens (lower-case hex) answered 429 `TooManyRequests`, "too many requests ... to the same device token"
    /// (reference: apns-live-activities.md §1.5). Defaults to none.
    public var tooManyRequestsTokens: Set<String> = []

    public init(
        internalServerErrorFraction: Double = 0,
        serviceUnavailableFraction: Double = 0,
        tooManyRequestsTokens: Set<String> = []
    ) {
        self.internalServerErrorFraction = internalServerErrorFraction
        self.serviceUnavailableFraction = serviceUnavailableFraction
        self.tooManyRequestsTokens = tooManyRequestsTokens
    }

    /// The server error for a request that drew `draw` (uniform in 0..<1), if any.
    func serverError(draw: Double) -> Rejection? {
        if draw < self.internalServerErrorFraction { return Rejection(.internalServerError) }
        if draw < self.internalServerErrorFraction + self.serviceUnavailableFraction {
            return Rejection(.serviceUnavailable)
        }
        return nil
    }

    /// Whether any request may draw a server error.
    var drawsServerErrors: Bool { self.internalServerErrorFraction > 0 || self.serviceUnavailableFraction > 0 }
}
