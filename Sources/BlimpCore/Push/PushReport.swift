import Foundation

/// What became of one push so far (`GET /api/pushes/{push_id}`, a Blimp extension): its state, the workers'
/// counts and its timings.
public struct PushReport: Sendable, Equatable {
    public var pushID: UUID
    public var operationID: UUID
    public var state: PushState
    /// Why the push failed, or that it was cancelled.
    public var failureReason: String?
    public var kind: PushKind
    public var event: LiveActivityNotification.Event?
    public var name: String?
    public var timestamp: Int64?
    public var attributesType: String?
    /// The requested APNs priority; pushes accepted before it was stored have none.
    public var priority: APNsPriority?
    public var acceptedAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?
    public var counts: PushCounts
    /// The push object as it was accepted.
    public var request: RawJSON
    /// The live activity channel the push went through, when its name has one; ``counts`` are the per-token path's.
    public var broadcast: BroadcastPath?

    /// How a push of a name backed by a live activity channel reached the channel's subscribers (see
    /// docs/references.md#broadcast-channels): a start subscribed its new activities with `input-push-channel`; an update
    /// or end was published once, and APNs's answer to the publish is kept.
    public struct BroadcastPath: Sendable, Equatable {
        public var apnsChannelID: String
        /// For an update or end, once published: APNs's status (0: no answer) and reason.
        public var status: Int?
        public var reason: APNsReason?
        /// The publish's `apns-request-id`.
        public var requestID: UUID?
        public var publishedAt: Date?

        public init(apnsChannelID: String, status: Int? = nil, reason: APNsReason? = nil, requestID: UUID? = nil, publishedAt: Date? = nil) {
            self.apnsChannelID = apnsChannelID
            self.status = status
            self.reason = reason
            self.requestID = requestID
            self.publishedAt = publishedAt
        }

        /// The path in the report's shape, for a push of `event`.
        func json(event: LiveActivityNotification.Event?) -> RawJSON {
            var members: [RawJSON.Member] = [
                .init("apns_channel_id", .string(self.apnsChannelID)),
                .init("path", .string(event == .start ? "input_push_channel" : "publish")),
            ]
            if event != .start {
                members += [
                    .init("status", self.status.map { .integer(Int64($0)) } ?? .null),
                    .init("reason", self.reason.map { .string($0.rawValue) } ?? .null),
                    .init("apns_request_id", self.requestID.map { .string($0.lowercaseString) } ?? .null),
                    .init("published_at", self.publishedAt.map { .string(AirshipDate.format($0)) } ?? .null),
                ]
            }
            return .object(members)
        }
    }

    public init(
        pushID: UUID, operationID: UUID, state: PushState, failureReason: String? = nil, kind: PushKind, event: LiveActivityNotification.Event?,
        name: String?, timestamp: Int64?, attributesType: String?, priority: APNsPriority?, acceptedAt: Date, startedAt: Date?,
        finishedAt: Date?, counts: PushCounts, request: RawJSON, broadcast: BroadcastPath? = nil
    ) {
        self.pushID = pushID
        self.operationID = operationID
        self.state = state
        self.failureReason = failureReason
        self.kind = kind
        self.event = event
        self.name = name
        self.timestamp = timestamp
        self.attributesType = attributesType
        self.priority = priority
        self.acceptedAt = acceptedAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.counts = counts
        self.request = request
        self.broadcast = broadcast
    }

    /// The report in the API's shape.
    public var json: RawJSON {
        var members: [RawJSON.Member] = [
            .init("push_id", .string(self.pushID.lowercaseString)),
            .init("operation_id", .string(self.operationID.lowercaseString)),
            .init("state", .string(self.state.rawValue)),
        ]
        if let reason = self.failureReason { members.append(.init("failure_reason", .string(reason))) }
        members.append(.init("kind", .string(self.kind.rawValue)))
        if let event = self.event, let name = self.name {
            var activity: [RawJSON.Member] = [.init("event", .string(event.rawValue)), .init("name", .string(name))]
            if let timestamp = self.timestamp { activity.append(.init("timestamp", .integer(timestamp))) }
            if let type = self.attributesType { activity.append(.init("attributes_type", .string(type))) }
            members.append(.init("live_activity", .object(activity)))
        }
        if let priority = self.priority { members.append(.init("priority", .integer(Int64(priority.rawValue)))) }
        members.append(.init("accepted_at", .string(AirshipDate.format(self.acceptedAt))))
        members.append(.init("started_at", self.startedAt.map { .string(AirshipDate.format($0)) } ?? .null))
        members.append(.init("finished_at", self.finishedAt.map { .string(AirshipDate.format($0)) } ?? .null))
        members.append(.init("counts", self.counts.json))
        if let broadcast = self.broadcast { members.append(.init("live_activity_channel", broadcast.json(event: self.event))) }
        members.append(.init("request", self.request))
        return .object(members)
    }
}
