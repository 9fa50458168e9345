/// The checks on a push's body: its size, a JSON object with an `aps` object, and for a Live Activity what
/// ActivityKit needs (docs/references.md#live-activity-payloads).
enum PushPayload {
    /// Checks `body` for `pushType`; for a Live Activity, returns its event and timestamp.
    ///
    /// - Throws: 400 `PayloadEmpty`, 413 `PayloadTooLarge`, or 400 `BadPayload` (the simulator's own reason).
    static func validate(_ body: [UInt8], for pushType: SimulatedPushType) throws(Rejection) -> LiveActivityPush? {
        guard !body.isEmpty else { throw Rejection(.payloadEmpty) }
        guard body.count <= pushType.maximumPayloadSize else { throw Rejection(.payloadTooLarge) }
        guard let aps = PayloadScanner.aps(in: body) else { throw Rejection(.badPayload) }
        guard pushType == .liveactivity else { return nil }
        guard let push = LiveActivityPush(aps) else { throw Rejection(.badPayload) }
        return push
    }
}

/// What the device model needs from a Live Activity payload's `aps`: its event and timestamp.
struct LiveActivityPush {
    /// `aps.event` (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
    enum Event: String {
        case start
        case update
        case end
    }

    let event: Event
    /// `aps.timestamp`, meant as epoch seconds.
    let timestamp: Double
    /// A start's `aps.input-push-channel`: the broadcast channel the activity subscribes to (docs/references.md#live-activity-payloads).
    let inputPushChannel: String?

    /// Above this a timestamp is almost certainly in milliseconds (10^11 seconds is the year 5138; docs/references.md#live-activity-timestamps).
    static let millisecondThreshold: Double = 100_000_000_000

    /// Whether the sender wrote milliseconds: APNs and the device accept it, and the activity then ignores every
    /// correct later update as older.
    var looksLikeMilliseconds: Bool { self.timestamp > Self.millisecondThreshold }

    /// Requires `event` and a numeric `timestamp`; a start also needs `attributes-type` (a string), `attributes`,
    /// `content-state` and `alert` (an object, or the short form, a string), an update needs `content-state`
    /// (docs/references.md#live-activity-payloads). `nil` when something is missing or of the wrong type.
    init?(_ aps: PayloadScanner.APS) {
        guard let text = aps.event, let event = Event(rawValue: String(decoding: text, as: UTF8.self)),
            let timestamp = aps.timestamp
        else { return nil }
        switch event {
        case .start:
            guard aps.attributesType == .string, aps.attributes == .object,
                aps.alert == .object || aps.alert == .string, aps.contentState == .object
            else { return nil }
        case .update:
            guard aps.contentState == .object else { return nil }
        case .end:
            guard aps.contentState == nil || aps.contentState == .object else { return nil }
        }
        self.event = event
        self.timestamp = timestamp
        self.inputPushChannel = event == .start ? aps.inputPushChannel.map { String(decoding: $0, as: UTF8.self) } : nil
    }
}
