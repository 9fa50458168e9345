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

    public init(
        pushID: UUID, operationID: UUID, state: PushState, failureReason: String? = nil, kind: PushKind, event: LiveActivityNotification.Event?,
        name: String?, timestamp: Int64?, attributesType: String?, priority: APNsPriority?, acceptedAt: Date, startedAt: Date?,
        finishedAt: Date?, counts: PushCounts, request: RawJSON
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
        members.append(.init("request", self.request))
        return .object(members)
    }
}
