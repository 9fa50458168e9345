import BlimpCore

/// What the simulator is set up with when it starts: the device model's budgets, how much it remembers, and the
/// bundle ids it serves. Faults, device states and trusted keys change while it runs instead.
public struct SimulatorConfiguration: Sendable {
    /// How many priority-10 Live Activity pushes a token accepts per rolling hour before the device throttles the
    /// rest (still answered 200, as APNs does). Apple documents a budget but not its size (see
    /// docs/references.md#priority-budget). Defaults to `10`.
    public var priorityTenBudgetPerHour: Int = 10
    /// The same budget for a token flagged with frequent updates (`NSSupportsLiveActivitiesFrequentUpdates`,
    /// docs/references.md#priority-budget). Defaults to `100`.
    public var frequentUpdatesPriorityTenBudgetPerHour: Int = 100
    /// How many deliveries are kept per token for inspection, newest last. Defaults to `20`.
    public var deliveriesKeptPerDevice: Int = 20
    /// How many tokens the simulator remembers; beyond it the oldest unconfigured tokens are forgotten (a benchmark
    /// to random tokens would otherwise grow without end). Defaults to `10_000`.
    public var maximumTrackedDevices: Int = 10_000
    /// How many distinct verified provider tokens are cached so that each signature is checked once. Defaults to
    /// `1_000`.
    public var providerTokenCacheSize: Int = 1_000
    /// The bundle ids the simulator accepts topics for; a push to any other gets 400 `TopicDisallowed`. `nil`
    /// accepts every bundle id. Defaults to `nil`.
    public var allowedBundleIDs: Set<String>? = nil
    /// The APNs environment simulated: in `sandbox` every 200 to a device push carries `apns-unique-id`, as
    /// Apple's development environment does; `production` sends none (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    /// Defaults to `sandbox`.
    public var environment: APNsEnvironment = .sandbox
    /// How many broadcast channels one bundle id may have; creating one more is answered 400
    /// `CannotCreateChannelConfig` (10,000 per app per environment, docs/references.md#broadcast-channels). Defaults to `10_000`.
    public var channelLimit: Int = 10_000

    public init() {}
}
