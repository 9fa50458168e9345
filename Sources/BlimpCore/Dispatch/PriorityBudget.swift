/// How many priority-10 Live Activity pushes one token gets in a rolling hour before Blimp sends at priority 5,
/// which the device does not count (docs/references.md#priority-budget). Apple's on-device budget is not
/// documented; the defaults follow what developers observe, and each app can set its own.
public struct PriorityBudget: Sendable, Equatable {
    /// Priority-10 pushes per token per hour. Defaults to 15.
    public var perHour: Int
    /// The same for channels whose user allows frequent updates (`frequent_pushes_enabled`). Defaults to 60.
    public var frequentPerHour: Int
    /// Push-to-start pushes per device per hour, a separate on-device budget of about 10. Defaults to 10.
    public var startsPerHour: Int

    public init(perHour: Int = 15, frequentPerHour: Int = 60, startsPerHour: Int = 10) {
        self.perHour = perHour
        self.frequentPerHour = frequentPerHour
        self.startsPerHour = startsPerHour
    }

    /// The priority to send a Live Activity push at: `requested`, unless it is 10 and the token's budget is spent.
    /// A push that lights the screen (a start, an end, an update with an alert) may use the whole budget; a plain
    /// update only three quarters of it, so that alerting ones still get priority 10 when the budget runs low.
    public func priority(requested: APNsPriority, alerting: Bool, sentInLastHour: Int, frequent: Bool) -> APNsPriority {
        guard requested == .immediate else { return requested }
        let budget = frequent ? self.frequentPerHour : self.perHour
        let limit = alerting ? budget : budget - budget / 4
        return sentInLastHour < limit ? .immediate : .conservingPower
    }

    /// Whether a device that received `sentInLastHour` starts may get another.
    public func allowsStart(sentInLastHour: Int) -> Bool { sentInLastHour < self.startsPerHour }
}
