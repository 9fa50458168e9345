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
    /// A Live Activity push's `aps.timestamp`, the caller's or stamped at acceptance: an update older than what an
    /// activity was already sent is skipped there.
    public let timestamp: Int64?
    /// For an end: when the ended activities leave the Lock Screen, if the push names it.
    public let dismissalDate: Date?
    public let pushType: APNsPushType
    public let priority: APNsPriority
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
    /// The live activity channel the push goes through (`pushes.broadcast_channel_id`): a start's payload subscribes
    /// its activities to it (they never report an update token, so never await one); an update or end is published to
    /// it once, besides the tokens of the name's activities that track one.
    public let broadcastChannelID: String?
    /// That channel's storage policy (`nil` when the push has none, or its record is gone).
    public let broadcastStoragePolicy: APNsMessageStoragePolicy?
    /// Whether the publish to the channel has been made and recorded (by this part or an earlier claim of it).
    public let broadcastPublished: Bool
    /// Whether, when the part was claimed, an activity of the push's name awaited its token: only then may an update
    /// or end hold itself (``DispatchStore/hold(_:now:)``), so the others skip that statement.
    public let nameAwaitsTokens: Bool
    /// For a push a local-time schedule fired in one time zone: that zone; the push goes to channels in it only.
    public let localTimeZone: LocalTimeZone?
    /// An update that some of its activities may already have been sent a newer timestamp for: only then is each
    /// target checked against what its activity was sent. Asked by the fan-out before it reads targets
    /// (``DispatchStore/mayBeStale(_:)``), apart from the claim, which every claim loop plans on every wake-up.
    public var mayBeStale = false

    /// The channel an update or end is still to be published to: part 0's, once.
    public var pendingBroadcast: String? {
        guard case .liveActivity(let event, _, _) = self.kind, event != .start, self.part == 0, !self.broadcastPublished else { return nil }
        return self.broadcastChannelID
    }

    /// Whether the push is an update or end of one channel's or one named user's activities of its name (not through
    /// a live activity channel, nor for one time zone), and this part is all of it: a few tokens at most, so such
    /// pushes are claimed, resolved, sent and recorded many at once (``DispatchStore/targets(ofPerUser:limit:now:)``).
    /// A named user of more channels than a batch takes is fanned out instead, and its parts are sent as any part.
    /// For a push just claimed, the same as ``perUserCondition``.
    public var isPerUser: Bool {
        guard case .liveActivity(let event, _, _) = self.kind, event != .start, self.localTimeZone == nil, self.broadcastChannelID == nil,
            self.isWhole
        else { return false }
        switch self.audience {
        case .channel, .namedUser: return true
        case .all, .tag, .and, .or, .not: return false
        }
    }

    /// ``isPerUser`` as a condition on the stored push `p` (a normalized audience of one channel or named user is an
    /// object with that one key).
    static let perUserCondition = """
        (p.kind = 'live_activity' AND p.event IN ('update', 'end') AND p.local_time_zone IS NULL
         AND p.broadcast_channel_id IS NULL AND (p.audience ? 'channel' OR p.audience ? 'named_user'))
        """

    /// Whether the part is the whole push, never split: it is the push's only part.
    public var isWhole: Bool { self.part == 0 && self.through == ChannelIDRange.all.through }

    /// Whether the part is whole and untouched: the first batch of such a part may split the rest of its range.
    public var mayBeSplit: Bool { self.isWhole && self.cursor == ChannelIDRange.all.after }

    /// What a claim selects, from the push (`p`) and the part (`part`), each column by name.
    enum Column: String, SelectedColumn {
        case appID = "app_id", pushID = "push_id", kind, event, activityName = "activity_name"
        case attributesType = "attributes_type", audience, apnsBody = "apns_body", pushType = "push_type", priority
        case collapseID = "collapse_id", expiresAt = "expires_at", alerting, dismissalDate = "dismissal_date"
        case traceParent = "trace_parent", apsTimestamp = "aps_timestamp"
        case part, through = "through_channel_id", cursor = "cursor_channel_id", counts
        case broadcastChannelID = "broadcast_channel_id", broadcastStoragePolicy = "broadcast_storage_policy"
        case broadcastPublished = "broadcast_published", nameAwaitsTokens = "name_awaits_tokens"
        case localTimeZone = "local_time_zone", localDefaultZone = "local_default_zone"

        var expression: String {
            switch self {
            case .broadcastStoragePolicy:
                """
                (SELECT c.storage_policy::int FROM live_activity_channels c
                 WHERE c.app_id = p.app_id AND c.apns_channel_id = p.broadcast_channel_id)
                """
            case .broadcastPublished: "p.broadcast_status IS NOT NULL"
            case .nameAwaitsTokens:
                """
                EXISTS (SELECT 1 FROM awaiting_activities a
                        WHERE a.app_id = p.app_id AND a.name = p.activity_name AND a.state = 'awaiting')
                """
            case .part, .through, .cursor: "part.\(self.rawValue)"
            case .counts: "part.counts::text"
            case .audience: "p.audience::text"
            default: "p.\(self.rawValue)"
            }
        }
    }

    /// The keys of a claimed row, read before the rest so that a row that cannot be read fails its own push.
    static func keys(of row: NamedRow<Column>) throws(UnreadableColumn) -> (appID: Int64, pushID: UUID) {
        (try row.decode(.appID), try row.decode(.pushID))
    }

    /// The part in `row`, or the column that cannot be read.
    init(_ row: NamedRow<Column>) throws(UnreadableColumn) {
        (self.appID, self.pushID) = try Self.keys(of: row)
        switch try row.decode(.kind, as: PushKind.self) {
        case .liveActivity:
            self.kind = .liveActivity(
                try row.decode(.event), name: try row.decode(.activityName), attributesType: try row.decode(.attributesType))
        case .alert:
            self.kind = .alert
        }
        let audience = try row.json(.audience)
        do {
            self.audience = try Audience(normalized: audience)
        } catch {
            throw UnreadableColumn(Column.audience.rawValue, error.description)
        }
        self.body = Array(try row.decode(.apnsBody, as: String.self).utf8)
        self.timestamp = try row.decode(.apsTimestamp)
        self.dismissalDate = try row.decode(.dismissalDate)
        self.pushType = try row.decode(.pushType)
        self.priority = try row.decode(.priority)
        self.collapseID = try row.decode(.collapseID)
        self.expiresAt = try row.decode(.expiresAt)
        self.isAlerting = try row.decode(.alerting)
        self.part = try row.decode(.part)
        self.through = try row.decode(.through)
        self.cursor = try row.decode(.cursor)
        self.counts = PushCounts(try row.json(.counts))
        self.traceParent = try row.decode(.traceParent)
        self.broadcastChannelID = try row.decode(.broadcastChannelID)
        self.broadcastStoragePolicy = try row.decodeIfPresent(.broadcastStoragePolicy)
        self.broadcastPublished = try row.decode(.broadcastPublished)
        self.nameAwaitsTokens = try row.decode(.nameAwaitsTokens)
        if let zone = try row.decode(.localTimeZone, as: String?.self) {
            self.localTimeZone = LocalTimeZone(name: zone, isDefault: try row.decode(.localDefaultZone))
        } else {
            self.localTimeZone = nil
        }
    }
}

/// One token a push goes to.
public struct DispatchTarget: Sendable, Equatable {
    public var channelID: UUID
    /// Checked as its row is read: a stored token that is not one is an unreadable row.
    public var token: DeviceToken
    /// The channel allows frequent Live Activity updates (a larger priority-10 budget).
    public var frequentPushes: Bool
    /// Priority-10 sends to this token in the last hour.
    public var recentPriority10: Int
    /// For a start: the name is already active on this channel; for an alert or an update: unused.
    public var alreadyActive: Bool
    /// For a start: a start of the name that Blimp sent to this channel still awaits its token (``AwaitingToken``).
    public var awaitingToken: Bool
    /// For a start: push-to-start sends to this channel in the last hour.
    public var recentStarts: Int
    /// For an update or end: the activity was sent a newer timestamp than the push's (an update skips it).
    public var newerSent: Bool
}
