/// When a failed delivery is tried again: after each delay in turn (the last repeating), each moved by up to a fifth
/// either way so that endpoints coming back are not all tried at once, or after the endpoint's `Retry-After` when it
/// gave one (at most ``longestRetryAfter``). The default grows as the Standard Webhooks specification's example
/// schedule does (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#retry-schedule),
/// but stops at 50 s, a minute at most with its jitter: a batch fails only the endpoint's own backlog, which waits in
/// the log, so an endpoint that comes back is tried again, and gets its backlog, within a minute. An endpoint failing
/// for ``disableAfter`` is disabled.
public struct WebhookRetrySchedule: Sendable, Equatable {
    public var delays: [Duration]
    public var disableAfter: Duration

    public static let standard = WebhookRetrySchedule(delays: [.seconds(5), .seconds(20), .seconds(50)], disableAfter: .seconds(5 * 86_400))

    /// The longest `Retry-After` honoured.
    public static let longestRetryAfter: Duration = .seconds(86_400)

    public init(delays: [Duration], disableAfter: Duration) {
        precondition(!delays.isEmpty, "a retry schedule has at least one delay")
        self.delays = delays
        self.disableAfter = disableAfter
    }

    /// How long to wait after the `failures`-th failure in a row (from 1), given the endpoint's `Retry-After`.
    public func delay(afterFailure failures: Int, retryAfter: Duration? = nil, jitter: Double = Double.random(in: -0.2...0.2)) -> Duration {
        if let retryAfter { return min(max(retryAfter, .zero), Self.longestRetryAfter) }
        let base = self.delays[min(max(failures, 1), self.delays.count) - 1]
        return base * (1 + min(max(jitter, -0.2), 0.2))
    }

    /// Reads `5s,5m,30m` (each a ``RetentionPolicy`` duration); `nil` when it is not such a list.
    public init?(parsing text: String, disableAfter: Duration = Self.standard.disableAfter) {
        let delays = text.split(separator: ",").map { RetentionPolicy.duration(String($0).trimmingCharacters(in: .whitespaces)) }
        guard !delays.isEmpty, delays.allSatisfy({ $0 != nil && $0! > .zero }) else { return nil }
        self.init(delays: delays.map { $0! }, disableAfter: disableAfter)
    }
}
