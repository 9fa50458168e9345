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
    var isConfigured: Bool { self.state != .active || self.frequentUpdates }

    /// The budget window: Apple speaks of a budget "per hour" (reference: apns-live-activities.md §4.1).
    static let budgetWindow: Double = 60 * 60

    /// Applies an accepted push as the device would, records it, and says what became of it.
    mutating func receive(
        _ delivery: SimulatedDelivery,
        liveActivity: LiveActivityPush?,
        now: Double,
        configuration: SimulatorConfiguration
    ) -> SimulatedDelivery.Outcome {
        var delivery = delivery
        if let liveActivity {
            let budget =
                self.frequentUpdates
                ? configuration.frequentUpdatesPriorityTenBudgetPerHour : configuration.priorityTenBudgetPerHour
            delivery.outcome = self.apply(liveActivity, priority: delivery.priority, now: now, budget: budget)
        }
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

    /// The activity's rules (reference §3.2, §3.3, §4.1): an update must be newer than the last one applied; an end
    /// applies even with an older timestamp; nothing applies after an end; a start begins a new activity (a
    /// push-to-start token starts one per push) and spends no budget, since push-to-start has its own (reference
    /// §4.2, not simulated). Updates and ends at priority 10 spend budget, and are throttled once it is spent.
    private mutating func apply(
        _ push: LiveActivityPush,
        priority: Int,
        now: Double,
        budget: Int
    ) -> SimulatedDelivery.Outcome {
        switch push.event {
        case .start:
            self.ended = false
            self.lastTimestamp = push.timestamp
            return .displayed
        case .update, .end:
            guard !self.ended else { return .ignoredEnded }
            if push.event == .update, let last = self.lastTimestamp, push.timestamp <= last { return .ignoredStale }
            guard priority != 10 || self.spendBudget(now: now, budget: budget) else { return .throttled }
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
