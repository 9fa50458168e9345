/// Totals since the simulator started or was last reset.
public struct SimulatorCounters: Sendable, Codable, Equatable {
    /// Requests answered 200.
    public var accepted = 0
    /// Requests answered with an error, by `reason`.
    public var rejected: [String: Int] = [:]
    /// Accepted pushes the device dropped for its priority-10 budget.
    public var throttled = 0
    /// Accepted Live Activity updates the device ignored as older than the last applied.
    public var ignoredStale = 0
    /// Accepted Live Activity pushes the device ignored because the activity had ended.
    public var ignoredEnded = 0
    /// Starts that named an unknown broadcast channel, so the activity failed to start.
    public var failedToStart = 0
    /// Broadcasts published (answered 200), whatever number of devices each reached.
    public var broadcasts = 0
    /// Channel-management requests answered with success (201, 200, 204).
    public var channelRequests = 0
    /// Accepted Live Activity pushes whose `timestamp` looks like milliseconds (above 10^11; see
    /// docs/references.md#live-activity-timestamps).
    public var millisecondTimestamps = 0

    public init() {}

    mutating func count(_ outcome: SimulatedDelivery.Outcome) {
        switch outcome {
        case .displayed: break
        case .throttled: self.throttled += 1
        case .ignoredStale: self.ignoredStale += 1
        case .ignoredEnded: self.ignoredEnded += 1
        case .failedToStart: self.failedToStart += 1
        }
    }
}
