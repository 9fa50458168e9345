/// What the simulator knows about one token: the state it was given, its Live Activity, its priority-10 budget and
/// its recent deliveries.
struct DeviceRecord {
    var state = DeviceTokenState.active
    /// When ``state`` was last set, seconds since the epoch.
    var stateChangedAt: Double?
    var frequentUpdates = false
    /// The newest `aps.timestamp` the activity applied.
    var lastTimestamp: Double?
    var ended = false
    /// The broadcast channel the activity subscribed to when it started (`input-push-channel`).
    var channelID: String?
    /// Arrival times of the priority-10 pushes that spent budget in the last hour, oldest first.
    var priorityTenArrivals: [Double] = []
    /// The kept deliveries, a ring whose oldest entry is at ``oldestDelivery`` once it is full.
    private var deliveryRing: [SimulatedDelivery] = []
    private var oldestDelivery = 0

    /// The kept deliveries, newest last.
    var deliveries: [SimulatedDelivery] {
        Array(self.deliveryRing[self.oldestDelivery...] + self.deliveryRing[..<self.oldestDelivery])
    }

    /// Whether the record holds settings the simulator was given, and so must never be forgotten.
    /// A subscribed activity is kept too, for its channel's broadcasts.
    var isConfigured: Bool { self.state != .active || self.frequentUpdates || self.channelID != nil }

    /// The budget window: Apple speaks of a budget "per hour" (docs/references.md#priority-budget).
    static let budgetWindow: Double = 60 * 60

    /// The broadcast channel a start names in `input-push-channel`, as the registry found it.
    enum StartChannel {
        /// No `input-push-channel`.
        case none
        /// A channel of the push's bundle id: the activity subscribes to it.
        case subscribe(String)
        /// No such channel: "the Live Activity fails to start" (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
        case unknown
    }

    /// Applies an accepted push as the device would, records it, and says what became of it.
    mutating func receive(
        _ delivery: SimulatedDelivery,
        liveActivity: LiveActivityPush?,
        now: Double,
        configuration: SimulatorConfiguration,
        channel: StartChannel = .none
    ) -> SimulatedDelivery.Outcome {
        var delivery = delivery
        if let liveActivity {
            let budget =
                self.frequentUpdates
                ? configuration.frequentUpdatesPriorityTenBudgetPerHour : configuration.priorityTenBudgetPerHour
            delivery.outcome = self.apply(liveActivity, priority: delivery.priority, now: now, budget: budget, channel: channel)
        }
        self.keep(delivery, limit: configuration.deliveriesKeptPerDevice)
        return delivery.outcome
    }

    /// Applies a broadcast published to the activity's channel with the same rules as a device push, except that
    /// it spends no priority-10 budget (https://developer.apple.com/documentation/usernotifications/sending-broadcast-push-notification-requests-to-apns), records it and says what became of it.
    mutating func receiveBroadcast(
        _ delivery: SimulatedDelivery, liveActivity: LiveActivityPush, now: Double, configuration: SimulatorConfiguration
    ) -> SimulatedDelivery.Outcome {
        var delivery = delivery
        delivery.outcome = self.apply(liveActivity, priority: delivery.priority, now: now, budget: nil, channel: .none)
        self.keep(delivery, limit: configuration.deliveriesKeptPerDevice)
        return delivery.outcome
    }

    /// Adds `delivery` to the ring, replacing the oldest once it holds `limit`.
    private mutating func keep(_ delivery: SimulatedDelivery, limit: Int) {
        if self.deliveryRing.count < limit {
            self.deliveryRing.append(delivery)
        } else if limit > 0 {
            self.deliveryRing[self.oldestDelivery] = delivery
            self.oldestDelivery = (self.oldestDelivery + 1) % limit
        }
    }

    /// The activity's rules (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications; docs/references.md#live-activity-timestamps; docs/references.md#priority-budget): an update older than the last one applied is ignored (one as old applies); an end
    /// applies even with an older timestamp; nothing applies after an end; a start begins a new activity (a
    /// push-to-start token starts one per push) and spends no budget, since push-to-start has its own (see
    /// docs/references.md#priority-budget; not simulated); a start naming an unknown broadcast channel fails, and one naming a known channel
    /// subscribes the new activity to it. Updates and ends at priority 10 spend budget (`nil`: none, for broadcasts),
    /// and are throttled once it is spent.
    private mutating func apply(
        _ push: LiveActivityPush,
        priority: Int,
        now: Double,
        budget: Int?,
        channel: StartChannel
    ) -> SimulatedDelivery.Outcome {
        switch push.event {
        case .start:
            switch channel {
            case .unknown: return .failedToStart
            case .subscribe(let id): self.channelID = id
            case .none: self.channelID = nil
            }
            self.ended = false
            self.lastTimestamp = push.timestamp
            return .displayed
        case .update, .end:
            guard !self.ended else { return .ignoredEnded }
            if push.event == .update, let last = self.lastTimestamp, push.timestamp < last { return .ignoredStale }
            guard priority != 10 || budget.map({ self.spendBudget(now: now, budget: $0) }) ?? true else { return .throttled }
            self.lastTimestamp = max(self.lastTimestamp ?? push.timestamp, push.timestamp)
            self.ended = push.event == .end
            return .displayed
        }
    }

    /// Spends one priority-10 push from the rolling hour's budget; `false` once it is spent.
    private mutating func spendBudget(now: Double, budget: Int) -> Bool {
        self.forgetArrivals(before: now - Self.budgetWindow)
        guard self.priorityTenArrivals.count < budget else { return false }
        self.priorityTenArrivals.append(now)
        return true
    }

    /// How many priority-10 pushes spent budget in the hour before `now`.
    func priorityTenPushes(inHourBefore now: Double) -> Int {
        self.priorityTenArrivals.count { $0 > now - Self.budgetWindow }
    }

    private mutating func forgetArrivals(before cutoff: Double) {
        let expired = self.priorityTenArrivals.prefix { $0 <= cutoff }.count
        self.priorityTenArrivals.removeFirst(expired)
    }
}
