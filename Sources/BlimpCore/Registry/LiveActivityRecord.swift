import Foundation

/// One Live Activity of a channel as the API and the console show it: its state (``LiveActivityStanding``), its
/// tokens and dates, the last push of its name APNs was asked to deliver to it, and its priority-10 sends this hour.
/// An activity awaiting its token has no token and no activity id.
public struct LiveActivityRecord: Sendable, Equatable, Encodable {
    public var name: String
    /// ActivityKit's `Activity.id`; `nil` until the device reports the activity.
    public var id: String?
    /// The update token; `nil` while awaiting it, and once the device removed the activity.
    public var token: String?
    public var standing: LiveActivityStanding
    /// When the device last reported the activity; `nil` while awaiting its token.
    public var updatedAt: Date?
    /// The stale date of the last push APNs accepted for it.
    public var staleDate: Date?
    public var lastUpdate: LiveActivityOutcome?
    /// Pushes of the name (updates and ends) APNs accepted for it at priority 10 in the last hour: what its
    /// priority budget counts (``PriorityBudget``).
    public var priority10SendsThisHour: Int
    /// The update or end held for an activity awaiting its token, sent once the token comes.
    public var heldPush: HeldPush?

    /// A push held for an activity awaiting its token.
    public struct HeldPush: Sendable, Equatable, Encodable {
        public var pushID: UUID
        /// Its `aps.timestamp`.
        public var timestamp: Int64

        public init(pushID: UUID, timestamp: Int64) {
            self.pushID = pushID
            self.timestamp = timestamp
        }

        enum CodingKeys: String, CodingKey {
            case timestamp
            case pushID = "push_id"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.pushID.lowercaseString, forKey: .pushID)
            try container.encode(self.timestamp, forKey: .timestamp)
        }
    }

    public init(
        name: String, id: String?, token: String?, standing: LiveActivityStanding, updatedAt: Date?, staleDate: Date?,
        lastUpdate: LiveActivityOutcome?, priority10SendsThisHour: Int, heldPush: HeldPush?
    ) {
        self.name = name
        self.id = id
        self.token = token
        self.standing = standing
        self.updatedAt = updatedAt
        self.staleDate = staleDate
        self.lastUpdate = lastUpdate
        self.priority10SendsThisHour = priority10SendsThisHour
        self.heldPush = heldPush
    }

    public var state: LiveActivityState { self.standing.state }

    enum CodingKeys: String, CodingKey {
        case name, id, token, state
        case endedBy = "ended_by"
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case dismissalDate = "dismissal_date"
        case staleDate = "stale_date"
        case updatedAt = "updated_at"
        case lastUpdate = "last_update"
        case priority10SendsThisHour = "priority_10_sends_this_hour"
        case heldPush = "held_push"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.name, forKey: .name)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.token, forKey: .token)
        try container.encode(self.standing.state, forKey: .state)
        try container.encode(self.standing.endedBy, forKey: .endedBy)
        try container.encode(AirshipDate.format(self.standing.startedAt), forKey: .startedAt)
        try container.encode(self.standing.endedAt.map { AirshipDate.format($0) }, forKey: .endedAt)
        try container.encode(self.standing.dismissAt.map { AirshipDate.format($0) }, forKey: .dismissalDate)
        try container.encode(self.staleDate.map { AirshipDate.format($0) }, forKey: .staleDate)
        try container.encode(self.updatedAt.map { AirshipDate.format($0) }, forKey: .updatedAt)
        try container.encode(self.lastUpdate, forKey: .lastUpdate)
        try container.encode(self.priority10SendsThisHour, forKey: .priority10SendsThisHour)
        try container.encode(self.heldPush, forKey: .heldPush)
    }
}

/// What APNs answered for one push of a name to one activity: the activity's last update.
public struct LiveActivityOutcome: Sendable, Equatable, Encodable {
    public var pushID: UUID
    public var event: LiveActivityNotification.Event
    /// The push's `aps.timestamp`.
    public var timestamp: Int64?
    /// The priority it went at (5 when its priority-10 budget was spent).
    public var priority: Int?
    /// APNs's HTTP status; 0 when no answer came.
    public var status: Int
    public var reason: APNsReason?
    public var apnsID: UUID?
    /// `apns-unique-id`, when APNs gave one (its sandbox does): the key of Apple's delivery log.
    public var apnsUniqueID: UUID?
    public var sentAt: Date

    public init(
        pushID: UUID, event: LiveActivityNotification.Event, timestamp: Int64?, priority: Int?, status: Int, reason: APNsReason?,
        apnsID: UUID?, apnsUniqueID: UUID?, sentAt: Date
    ) {
        self.pushID = pushID
        self.event = event
        self.timestamp = timestamp
        self.priority = priority
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.sentAt = sentAt
    }

    enum CodingKeys: String, CodingKey {
        case event, timestamp, priority, status, reason
        case pushID = "push_id"
        case apnsID = "apns_id"
        case apnsUniqueID = "apns_unique_id"
        case sentAt = "sent_at"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.pushID.lowercaseString, forKey: .pushID)
        try container.encode(self.event.rawValue, forKey: .event)
        try container.encode(self.timestamp, forKey: .timestamp)
        try container.encode(self.priority, forKey: .priority)
        try container.encode(self.status, forKey: .status)
        try container.encode(self.reason, forKey: .reason)
        try container.encode(self.apnsID?.lowercaseString, forKey: .apnsID)
        try container.encode(self.apnsUniqueID?.lowercaseString, forKey: .apnsUniqueID)
        try container.encode(AirshipDate.format(self.sentAt), forKey: .sentAt)
    }
}
