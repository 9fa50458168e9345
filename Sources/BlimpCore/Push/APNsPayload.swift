import Foundation

/// What a worker sends to APNs for one push, the same for every token: the JSON body and the headers that
/// depend on the push (docs/references.md#live-activity-payloads).
public struct APNsPayload: Sendable, Equatable {
    public var pushType: APNsPushType
    public var priority: APNsPriority
    public var collapseID: String?
    /// The JSON body, compact, with `aps` keys in APNs's kebab case.
    public private(set) var body: String
    /// A Live Activity's `aps.timestamp`, the body's first `aps` member; `nil` for an alert.
    public private(set) var timestamp: Int64?

    /// APNs refuses larger bodies (`PayloadTooLarge`).
    public static let maximumSize = 4096

    /// The payload of `push`, with `timestamp` as a Live Activity's `aps.timestamp`. A start of a name backed by a
    /// live activity channel carries `input-push-channel` with `broadcastChannelID` (the new activities subscribe to the
    /// channel) instead of `input-push-token` (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications).
    public init(_ push: Push, timestamp: Int64, broadcastChannelID: String? = nil) {
        switch push.content {
        case .liveActivity(let activity):
            self.pushType = .liveActivity
            self.priority = activity.priority
            self.collapseID = nil
            self.timestamp = timestamp
            self.body = RawJSON.object([.init("aps", .object(Self.aps(activity, timestamp: timestamp, channel: broadcastChannelID)))]).text
        case .alert(let alert):
            self.pushType = alert.isBackground ? .background : .alert
            self.priority = alert.priority
            self.collapseID = alert.collapseID
            self.timestamp = nil
            self.body = RawJSON.object([.init("aps", .object(alert.aps))] + alert.extra).text
        }
    }

    /// The start of a Live Activity's body, up to its timestamp's digits.
    private static let timestampPrefix = #"{"aps":{"timestamp":"#

    /// The same payload with `aps.timestamp` set to `timestamp`, the rest of the body as built: what the intake does
    /// when it gives a Live Activity push its timestamp. An alert, which has none, is returned as it is.
    public func stamped(_ timestamp: Int64) -> APNsPayload {
        guard let old = self.timestamp, old != timestamp else { return self }
        var stamped = self
        let rest = self.body.utf8.dropFirst(Self.timestampPrefix.utf8.count + String(old).utf8.count)
        stamped.body = Self.timestampPrefix + String(timestamp) + String(decoding: rest, as: UTF8.self)
        stamped.timestamp = timestamp
        return stamped
    }

    private static func aps(_ activity: LiveActivityNotification, timestamp: Int64, channel: String?) -> [RawJSON.Member] {
        var aps: [RawJSON.Member] = [.init("timestamp", .integer(timestamp)), .init("event", .string(activity.event.rawValue))]
        if let state = activity.contentState { aps.append(.init("content-state", state)) }
        if let type = activity.attributesType { aps.append(.init("attributes-type", .string(type))) }
        if let attributes = activity.attributes { aps.append(.init("attributes", attributes)) }
        if activity.event == .start {
            if let channel {
                // The new activity subscribes to the broadcast channel; it never reports an update token.
                aps.append(.init("input-push-channel", .string(channel)))
            } else {
                // iOS 18 then reports the new activity's update token, which the SDK tracks under the name.
                aps.append(.init("input-push-token", .integer(1)))
            }
        }
        if let alert = activity.alert { aps.append(.init("alert", alert)) }
        if let date = activity.staleDate { aps.append(.init("stale-date", .integer(date))) }
        if let date = activity.dismissalDate { aps.append(.init("dismissal-date", .integer(date))) }
        if let score = activity.relevanceScore { aps.append(.init("relevance-score", score)) }
        return aps
    }

    /// An ``InvalidField`` when the body is larger than APNs takes: 4,096 bytes for a device push, or, for a
    /// `broadcast` publish, ``APNsBroadcastRequest/maxPayloadBytes`` (https://developer.apple.com/documentation/usernotifications/sending-broadcast-push-notification-requests-to-apns).
    public func checkSize(at path: String, broadcast: Bool = false) throws(InvalidField) {
        let size = self.body.utf8.count
        if broadcast {
            guard size <= APNsBroadcastRequest.maxPayloadBytes else {
                throw InvalidField(
                    path, "the broadcast payload would be \(size) bytes; APNs publishes at most \(APNsBroadcastRequest.maxPayloadBytes) to a live activity channel")
            }
            return
        }
        guard size <= Self.maximumSize else {
            throw InvalidField(path, "the APNs payload would be \(size) bytes; APNs takes at most \(Self.maximumSize)")
        }
    }
}
