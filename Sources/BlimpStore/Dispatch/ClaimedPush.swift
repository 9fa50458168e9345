import BlimpCore
import Foundation

/// One part of a push's fan-out, held by a worker under a lease: what to send, to whom, and how far the part has
/// come.
public struct ClaimedPush: Sendable {
    public enum Kind: Sendable, Equatable {
        /// `start`, `update` or `end` of the activities tracked under `name`.
        case liveActivity(LiveActivityNotification.Event, name: String, attributesType: String?)
        case alert
    }

    public let appID: Int64
    public let pushID: UUID
    public let kind: Kind
    public let audience: Audience
    /// The APNs body, the same for every token.
    public let body: [UInt8]
    /// For an end: when the ended activities leave the Lock Screen, if the push names it.
    public let dismissalDate: Date?
    public let pushType: APNsPushType
    public let priority: Int
    public let collapseID: String?
    public let expiresAt: Date?
    /// It lights the screen (an alert, a start, an end, an update with an alert): it gets priority 10 before plain
    /// updates when a token's budget runs low.
    public let isAlerting: Bool
    /// Which part of the fan-out this is: 0, over every channel, until its first full batch splits off the rest.
    public let part: Int16
    /// The last channel id of the part's range.
    public var through: UUID
    /// The last channel the part finished; targets after it, through `through`, remain.
    public var cursor: UUID
    /// The part's own counts; the push's are the sum of its parts'.
    public var counts: PushCounts
    /// The W3C `traceparent` of the request that queued the push, when it was traced (``TraceParent``).
    public let traceParent: String?

    /// Whether the part is the whole push, never split: it is the push's only part.
    public var isWhole: Bool { self.part == 0 && self.through == ChannelIDRange.all.through }

    /// Whether the part is whole and untouched: the first batch of such a part may split the rest of its range.
    public var mayBeSplit: Bool { self.isWhole && self.cursor == ChannelIDRange.all.after }

    /// A claimed row as the claim reads it (``rowColumns``): the keys, then everything else optional, so that a row
    /// the schema let through but this worker cannot use is told apart from a database error and fails its push
    /// instead of being claimed again and again.
    typealias Row = (
        Int64, UUID, String?, String?, String?, String?, String?, String?, String?, Int16?, String?, Date?, Bool?,
        Int16, UUID?, UUID?, String?, Date?, String?
    )

    /// What a claim selects for a ``Row``, from the push (`p`) and the part (`part`).
    static let rowColumns = """
        p.app_id, p.push_id, p.kind, p.event, p.activity_name, p.attributes_type, p.audience::text, p.apns_body,
        p.push_type, p.priority, p.collapse_id, p.expires_at, p.alerting,
        part.part, part.through_channel_id, part.cursor_channel_id, part.counts::text, p.dismissal_date, p.trace_parent
        """

    /// The part in `row`, or why it cannot be sent.
    init(_ row: Row) throws(InvalidField) {
        let (appID, pushID, kind, event, name, attributesType, audience, body, pushType, priority, collapseID, expiresAt,
             alerting, part, through, cursor, counts, dismissalDate, traceParent) = row
        func required<T>(_ value: T?, _ column: String) throws(InvalidField) -> T {
            guard let value else { throw InvalidField(column, "\(column) is missing") }
            return value
        }
        switch try required(kind, "kind") {
        case "live_activity":
            guard let event = event.flatMap(LiveActivityNotification.Event.init(rawValue:)) else {
                throw InvalidField("event", "not a Live Activity event: \(event ?? "none")")
            }
            self.kind = .liveActivity(event, name: try required(name, "activity_name"), attributesType: attributesType)
        case "alert":
            self.kind = .alert
        case let other:
            throw InvalidField("kind", "unknown kind \(other)")
        }
        guard let pushType = APNsPushType(rawValue: try required(pushType, "push_type")) else {
            throw InvalidField("push_type", "unknown push type \(pushType ?? "")")
        }
        self.appID = appID
        self.pushID = pushID
        self.audience = try Audience(normalized: try Self.json(try required(audience, "audience"), "audience"))
        self.body = Array(try required(body, "apns_body").utf8)
        self.dismissalDate = dismissalDate
        self.pushType = pushType
        self.priority = Int(try required(priority, "priority"))
        self.collapseID = collapseID
        self.expiresAt = expiresAt
        self.isAlerting = alerting ?? true
        self.part = part
        self.through = try required(through, "through_channel_id")
        self.cursor = try required(cursor, "cursor_channel_id")
        self.counts = PushCounts(try Self.json(counts ?? "{}", "counts"))
        self.traceParent = traceParent
    }

    private static func json(_ text: String, _ column: String) throws(InvalidField) -> RawJSON {
        do {
            return try RawJSONParser.parse(text.utf8, numberLength: RawJSONParser.storedNumberLength)
        } catch {
            throw InvalidField(column, "\(error.message) at column \(error.column)")
        }
    }
}

/// One token a push goes to.
public struct DispatchTarget: Sendable, Equatable {
    public var channelID: UUID
    public var token: String
    /// The channel allows frequent Live Activity updates (a larger priority-10 budget).
    public var frequentPushes: Bool
    /// Priority-10 sends to this token in the last hour.
    public var recentPriority10: Int
    /// For a start: the name is already active on this channel; for an alert or an update: unused.
    public var alreadyActive: Bool
    /// For a start: push-to-start sends to this channel in the last hour.
    public var recentStarts: Int
}
