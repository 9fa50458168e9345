import Foundation

/// What the simulator knows about one token, for inspection.
public struct SimulatedDevice: Sendable, Codable, Equatable {
    /// The token, lower-case hex.
    public var token: String
    /// Whether pushes to it are accepted.
    public var state: DeviceTokenState
    /// When the state was last set; the `timestamp` of a 410.
    public var stateChangedAt: Date?
    /// Whether it has the larger priority-10 budget of frequent updates.
    public var frequentUpdates: Bool
    /// The newest `aps.timestamp` its Live Activity applied.
    public var lastTimestamp: Double?
    /// Whether its Live Activity has ended.
    public var ended: Bool
    /// The broadcast channel its Live Activity subscribed to when it started, if any.
    public var channelID: String?
    /// Priority-10 Live Activity pushes that spent budget in the last hour.
    public var priorityTenPushesInLastHour: Int
    /// Its most recent deliveries, newest last.
    public var deliveries: [SimulatedDelivery]

    init(token: String, record: DeviceRecord, now: Double) {
        self.token = token
        self.state = record.state
        self.stateChangedAt = record.stateChangedAt.map(Date.init(timeIntervalSince1970:))
        self.frequentUpdates = record.frequentUpdates
        self.lastTimestamp = record.lastTimestamp
        self.ended = record.ended
        self.channelID = record.channelID
        self.priorityTenPushesInLastHour = record.priorityTenPushes(inHourBefore: now)
        self.deliveries = record.deliveries
    }
}
