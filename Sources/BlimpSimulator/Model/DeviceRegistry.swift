import BlimpCore

/// The simulated devices, the faults to answer with and the counters: everything a request changes once it is
/// valid, kept together so that each request takes one lock once.
struct DeviceRegistry {
    private(set) var devices: [String: DeviceRecord] = [:]
    /// Tokens in the order their records were made, to forget the oldest first.
    private var arrivalOrder: [String] = []
    private(set) var counters = SimulatorCounters()
    var faults = SimulatorFaults()
    /// The broadcast channels and their subscribers.
    var channels = BroadcastChannels()
    private var random: any RandomNumberGenerator & Sendable
    private let configuration: SimulatorConfiguration

    init(configuration: SimulatorConfiguration, random: any RandomNumberGenerator & Sendable) {
        self.configuration = configuration
        self.random = random
    }

    /// Answers a valid push: a drawn server error, the token's state, a 429 for a throttled token, or 200 with the
    /// push handed to the device.
    mutating func deliver(
        _ delivery: SimulatedDelivery,
        to token: String,
        liveActivity: LiveActivityPush?,
        now: Double
    ) -> SimulatorResponse {
        if self.faults.drawsErrors,
            let error = self.faults.drawnError(Double.random(in: 0..<1, using: &self.random))
        {
            return self.reject(error, apnsID: delivery.apnsID)
        }
        let index = self.devices.index(forKey: token)
        if let index, self.devices.values[index].state != .active {
            return self.reject(self.devices.values[index], apnsID: delivery.apnsID)
        }
        if !self.faults.tooManyRequestsTokens.isEmpty, self.faults.tooManyRequestsTokens.contains(token) {
            return self.reject(Rejection(.tooManyRequests), apnsID: delivery.apnsID)
        }
        if liveActivity?.looksLikeMilliseconds == true { self.counters.millisecondTimestamps += 1 }
        let outcome: SimulatedDelivery.Outcome
        if let liveActivity, liveActivity.event == .start {
            outcome = self.start(delivery, to: token, liveActivity: liveActivity, now: now)
        } else {
            let configuration = self.configuration
            let receive = { (record: inout DeviceRecord) in
                record.receive(delivery, liveActivity: liveActivity, now: now, configuration: configuration)
            }
            outcome = if let index { receive(&self.devices.values[index]) } else { self.withRecord(for: token, receive) }
        }
        self.counters.count(outcome)
        self.counters.accepted += 1
        return SimulatorResponse(status: 200, apnsID: delivery.apnsID)
    }

    /// A Live Activity start: the new activity subscribes to the broadcast channel its `input-push-channel` names,
    /// or fails to start when the push's bundle id has no such channel (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
    /// Starts are rare, so ordinary pushes never pay for the channel lookup.
    private mutating func start(
        _ delivery: SimulatedDelivery, to token: String, liveActivity: LiveActivityPush, now: Double
    ) -> SimulatedDelivery.Outcome {
        let channel: DeviceRecord.StartChannel =
            if let id = liveActivity.inputPushChannel {
                self.channels.channel(id, of: delivery.topic.dropLast(SimulatedPushType.liveActivityTopicSuffix.count)) != nil
                    ? .subscribe(id) : .unknown
            } else {
                .none
            }
        let configuration = self.configuration
        let (outcome, old, new) = self.withRecord(for: token) { record in
            let old = record.channelID
            let outcome = record.receive(delivery, liveActivity: liveActivity, now: now, configuration: configuration, channel: channel)
            return (outcome, old, record.channelID)
        }
        self.channels.move(token, from: old, to: new)
        return outcome
    }

    /// Applies a broadcast published to channel `id` to every active token subscribed to it, each recording it as
    /// a delivery through the channel.
    mutating func publish(_ delivery: SimulatedDelivery, to id: String, liveActivity: LiveActivityPush, now: Double) {
        let configuration = self.configuration
        var delivery = delivery
        delivery.channelID = id
        for token in self.channels.publish(to: id) {
            let outcome = self.withRecord(for: token) { record -> SimulatedDelivery.Outcome? in
                guard record.state == .active else { return nil }
                return record.receiveBroadcast(delivery, liveActivity: liveActivity, now: now, configuration: configuration)
            }
            if let outcome { self.counters.count(outcome) }
        }
        self.counters.broadcasts += 1
    }

    /// Creates a channel for `bundleID` within the configured limit.
    mutating func createChannel(bundleID: String, storagePolicy: APNsMessageStoragePolicy, now: Double) throws(Rejection) -> String {
        try self.channels.create(
            bundleID: bundleID, storagePolicy: storagePolicy, limit: self.configuration.channelLimit, now: now, random: &self.random)
    }

    /// Counts a successful channel-management request.
    mutating func countChannelRequest() {
        self.counters.channelRequests += 1
    }

    /// Counts a refused request and answers it.
    mutating func reject(_ rejection: Rejection, apnsID: String) -> SimulatorResponse {
        self.counters.rejected[rejection.reason.rawValue, default: 0] += 1
        return SimulatorResponse(status: rejection.status, apnsID: apnsID, reason: rejection.reason)
    }

    /// The answer for a token that is not active; a 410 carries when it stopped being valid, in milliseconds
    /// (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    private mutating func reject(_ record: DeviceRecord, apnsID: String) -> SimulatorResponse {
        let reason: APNsReason =
            switch record.state {
            case .active, .bad: .badDeviceToken
            case .unregistered: .unregistered
            case .expired: .expiredToken
            }
        var response = self.reject(Rejection(reason), apnsID: apnsID)
        if response.status == 410 { response.timestamp = Int64(((record.stateChangedAt ?? 0) * 1000).rounded(.down)) }
        return response
    }

    /// Runs `body` on the record for `token`, making one (and forgetting the oldest unconfigured ones beyond
    /// ``SimulatorConfiguration/maximumTrackedDevices``) if there is none.
    mutating func withRecord<T>(for token: String, _ body: (inout DeviceRecord) -> T) -> T {
        if self.devices[token] == nil {
            if self.devices.count >= self.configuration.maximumTrackedDevices { self.forgetOldest() }
            self.arrivalOrder.append(token)
        }
        return body(&self.devices[token, default: DeviceRecord()])
    }

    /// Forgets a tenth of the tracked tokens, oldest first, keeping those with settings.
    private mutating func forgetOldest() {
        var forgotten = 0
        var scanned = 0
        for token in self.arrivalOrder {
            guard forgotten < max(1, self.configuration.maximumTrackedDevices / 10) else { break }
            scanned += 1
            if self.devices[token]?.isConfigured == false {
                self.devices[token] = nil
                forgotten += 1
            }
        }
        self.arrivalOrder.removeFirst(scanned)
    }

    /// Forgets every device, channel and counter, and clears the faults.
    mutating func reset() {
        self = DeviceRegistry(configuration: self.configuration, random: self.random)
    }
}
