import BlimpCore
import Foundation

/// The `pushes` row as ``PushIntake`` writes it, described once: each case is a column, with its type in the insert's
/// JSON record and its value for one accepted push (``value(of:)``, an exhaustive switch: a new column is one case
/// here and its value).
enum PushColumn: String, RecordColumn {
    case appID = "app_id"
    case pushID = "push_id"
    case operationID = "operation_id"
    case kind
    case activityName = "activity_name"
    case event
    case apsTimestamp = "aps_timestamp"
    case attributesType = "attributes_type"
    case audience
    case audienceScope = "audience_scope"
    case payload
    case apnsBody = "apns_body"
    case pushType = "push_type"
    case priority
    case collapseID = "collapse_id"
    case expiresAt = "expires_at"
    case alerting
    case dismissalDate = "dismissal_date"
    case acceptedAt = "accepted_at"
    case notBefore = "not_before"
    case traceParent = "trace_parent"
    case broadcastChannelID = "broadcast_channel_id"
    case localTimeZone = "local_time_zone"
    case localDefaultZone = "local_default_zone"

    var recordType: String {
        switch self {
        case .appID, .apsTimestamp, .expiresAt, .dismissalDate, .acceptedAt, .notBefore: "bigint"
        case .pushID, .operationID: "uuid"
        case .audience, .payload: "jsonb"
        case .priority: "smallint"
        case .alerting, .localDefaultZone: "boolean"
        case .kind, .activityName, .event, .attributesType, .audienceScope, .apnsBody, .pushType, .collapseID, .traceParent,
            .broadcastChannelID, .localTimeZone:
            "text"
        }
    }

    var valueExpression: String {
        switch self {
        case .expiresAt, .dismissalDate: "to_timestamp(r.\(self.rawValue))"
        case .acceptedAt, .notBefore: RecordTime.expression("r.\(self.rawValue)")
        default: "r.\(self.rawValue)"
        }
    }

    /// The column's value for `push`; `nil` is NULL.
    func value(of push: AcceptedPush) -> RawJSON? {
        let activity: LiveActivityNotification? = if case .liveActivity(let activity) = push.push.content { activity } else { nil }
        switch self {
        case .appID: return .integer(push.appID)
        case .pushID: return .string(push.pushID.lowercaseString)
        case .operationID: return .string(push.operationID.lowercaseString)
        case .kind: return .string(push.push.kind.rawValue)
        case .activityName: return activity.map { .string($0.name) }
        case .event: return activity.map { .string($0.event.rawValue) }
        case .apsTimestamp: return activity.map { _ in .integer(push.timestamp ?? 0) }
        case .attributesType: return activity?.attributesType.map(RawJSON.string)
        case .audience: return push.push.audience.json
        // A name backed by a live activity channel is one activity for all its subscribers: no scope confines it.
        case .audienceScope:
            guard activity != nil, push.broadcastChannelID == nil else { return nil }
            return AudienceScope(push.push.audience).map { .string($0.stored) }
        case .payload: return push.push.request
        case .apnsBody: return .string(push.payload.body)
        case .pushType: return .string(push.payload.pushType.rawValue)
        case .priority: return .integer(Int64(push.payload.priority.rawValue))
        case .collapseID: return push.payload.collapseID.map(RawJSON.string)
        case .expiresAt: return push.push.expiry.map { .integer(Int64($0.date(acceptedAt: push.acceptedAt).timeIntervalSince1970)) }
        case .alerting: return .bool(activity.map { $0.event != .update || $0.alert != nil } ?? true)
        case .dismissalDate: return activity.flatMap { $0.event == .end ? $0.dismissalDate : nil }.map(RawJSON.integer)
        case .acceptedAt, .notBefore: return RecordTime.value(push.acceptedAt)
        case .traceParent: return push.traceParent.map(RawJSON.string)
        case .broadcastChannelID: return push.broadcastChannelID.map(RawJSON.string)
        case .localTimeZone: return push.localTimeZone.map { .string($0.name) }
        case .localDefaultZone: return .bool(push.localTimeZone?.isDefault ?? false)
        }
    }
}

/// One push of a submission as it is accepted: its ids, its timestamp (a Live Activity's) and what a worker will send.
struct AcceptedPush {
    let appID: Int64
    let pushID: UUID
    let operationID: UUID
    let push: Push
    let timestamp: Int64?
    let acceptedAt: Date
    let traceParent: String?
    /// The live activity channel the push goes through, if its name has one.
    let broadcastChannelID: String?
    /// The APNs body and headers, with the Live Activity's timestamp.
    let payload: APNsPayload
    /// The time zone of a push a local-time schedule fired.
    let localTimeZone: LocalTimeZone?

    init(_ item: PushSubmission.Item, of submission: PushSubmission, timestamp: Int64?, acceptedAt: Date) {
        self.appID = submission.appID
        self.pushID = item.pushID
        self.operationID = submission.operationID
        self.push = item.push
        self.timestamp = timestamp
        self.acceptedAt = acceptedAt
        self.traceParent = submission.traceParent
        self.broadcastChannelID = item.broadcastChannelID
        self.localTimeZone = submission.localTimeZone
        self.payload = timestamp.map(item.payload.stamped) ?? item.payload
    }
}
