import BlimpCore
import Foundation
import PostgresNIO

/// The SQL that reads Live Activities as ``LiveActivityRecord``s, shared by the channel lookup (``ChannelRecords``)
/// and the listing by name (``ChannelStore/liveActivities(named:appID:start:limit:)``), and their decoding.
///
/// An activity is a (channel, name) key joined to its tracked row (`live_activities`, while within its 12 hours)
/// and to a start awaiting its token (`awaiting_activities`). Its last update is derived on read from
/// `delivery_outcomes` (`delivery_outcomes_by_channel`, newest first) joined to `pushes`: the newest outcome of a push
/// of the name on the channel since the activity started. Nothing is written on the fan-out's path for it.
struct LiveActivityRecords {
    /// The placeholder of the app id, for the rest of the query too.
    let app: String
    /// The placeholders of the oldest start still kept and of an hour ago.
    private let keptSince: String
    private let hourAgo: String

    /// Binds the values every query here reads to `parameters`.
    init(appID: Int64, now: Date, binding parameters: inout QueryParameters) {
        self.app = parameters.bind(appID)
        self.keptSince = parameters.bind(now.addingTimeInterval(-LiveActivityLifetime.kept))
        self.hourAgo = parameters.bind(now.addingTimeInterval(-3600))
    }

    /// How much of each activity a query reads.
    enum Detail {
        /// Everything ``LiveActivityRecord`` shows.
        case full
        /// What its state needs, for counting the activities of one name (the placeholder bound to it): no last update
        /// and no priority-10 sends, and the stale date looked up only for active activities, and only when a push of
        /// the name carried one. Each activity costs a few index probes instead of a dozen.
        case stateOnly(name: String)
    }

    /// For each (`channel_id`, `name`) of `keys` (a relation, aliased `k` here) with an activity on record: the
    /// channel id, the name and the activity as a JSON object (`activity`) that ``Row`` decodes.
    func select(from keys: String, _ detail: Detail = .full) -> String {
        // The newest outcomes of the name's pushes on the channel since the activity started (the later of the
        // tracked start and the awaiting start: the activity ``LiveActivityFacts`` takes).
        let outcomes = """
            FROM delivery_outcomes o JOIN pushes p ON p.app_id = o.app_id AND p.push_id = o.push_id
            WHERE o.app_id = \(self.app) AND o.channel_id = k.channel_id AND p.activity_name = k.name
              AND o.sent_at >= greatest(a.started_at, w.sent_at)
            """
        let lastDeliveredStaleDate = """
            (SELECT p.apns_body::jsonb #> '{aps,stale-date}' \(outcomes) AND o.status = 200 ORDER BY o.sent_at DESC LIMIT 1)
            """
        let columns: String
        let lastUpdate: String
        switch detail {
        case .full:
            columns = """
                'stale_date', CASE WHEN u.status = 200 THEN u.apns_body::jsonb #> '{aps,stale-date}' ELSE \(lastDeliveredStaleDate) END,
                'last_update', CASE WHEN u.push_id IS NOT NULL THEN json_build_object(
                    'push_id', u.push_id, 'event', u.event, 'timestamp', u.aps_timestamp, 'priority', u.priority,
                    'status', u.status, 'reason', u.reason, 'apns_id', u.apns_id, 'apns_unique_id', u.apns_unique_id,
                    'sent_at', extract(epoch FROM u.sent_at)) END,
                'priority_10_sends', (SELECT count(*) \(outcomes) AND o.sent_at > \(self.hourAgo) AND o.priority = 10 AND o.status = 200
                                      AND p.event <> 'start')
                """
            lastUpdate = """
                LEFT JOIN LATERAL (
                    SELECT o.push_id, p.event, p.aps_timestamp, o.priority, o.status, o.reason, o.apns_id, o.apns_unique_id,
                           o.sent_at, p.apns_body
                    \(outcomes)
                    ORDER BY o.sent_at DESC LIMIT 1) u ON true
                """
        case .stateOnly(let name):
            // The EXISTS binds nothing of the row: PostgreSQL evaluates it once per query.
            columns = """
                'stale_date', CASE WHEN EXISTS (SELECT 1 FROM pushes s WHERE s.app_id = \(self.app) AND s.activity_name = \(name)
                                                AND s.apns_body LIKE '%"stale-date"%')
                                    AND a.state = 'active' THEN \(lastDeliveredStaleDate) END,
                'priority_10_sends', 0
                """
            lastUpdate = ""
        }
        return """
            SELECT k.channel_id, k.name, json_build_object(
                'name', k.name, 'id', a.activity_id, 'token', a.token, 'record', a.state,
                'started_at', extract(epoch FROM a.started_at), 'ended_at', extract(epoch FROM a.ended_at),
                'dismiss_at', extract(epoch FROM a.dismiss_at), 'updated_at', extract(epoch FROM a.updated_at),
                'awaiting_since', extract(epoch FROM w.sent_at), 'awaiting_state', w.state,
                'held_push_id', w.held_push_id, 'held_timestamp', w.held_timestamp,
                \(columns)
            ) AS activity
            FROM \(keys) k
            LEFT JOIN live_activities a ON a.app_id = \(self.app) AND a.channel_id = k.channel_id AND a.name = k.name
                                      AND a.started_at >= \(self.keptSince)
            LEFT JOIN awaiting_activities w ON w.app_id = \(self.app) AND w.channel_id = k.channel_id AND w.name = k.name
            \(lastUpdate)
            WHERE a.name IS NOT NULL OR w.name IS NOT NULL
            """
    }

    /// An activity as ``select(from:)`` builds it, times in seconds since 1970.
    struct Row: Decodable {
        var name: String
        var id: String?
        var token: String?
        var record: LiveActivityFacts.Tracked.Record?
        var startedAt: Double?
        var endedAt: Double?
        var dismissAt: Double?
        var updatedAt: Double?
        var awaitingSince: Double?
        var awaitingState: String?
        var heldPushID: UUID?
        var heldTimestamp: Int64?
        var staleDate: Double?
        var lastUpdate: Outcome?
        var priority10Sends: Int

        struct Outcome: Decodable {
            var pushID: UUID
            var event: String
            var timestamp: Int64?
            var priority: Int?
            var status: Int
            var reason: APNsReason?
            var apnsID: UUID?
            var apnsUniqueID: UUID?
            var sentAt: Double

            enum CodingKeys: String, CodingKey {
                case event, timestamp, priority, status, reason
                case pushID = "push_id"
                case apnsID = "apns_id"
                case apnsUniqueID = "apns_unique_id"
                case sentAt = "sent_at"
            }
        }

        enum CodingKeys: String, CodingKey {
            case name, id, token, record
            case startedAt = "started_at"
            case endedAt = "ended_at"
            case dismissAt = "dismiss_at"
            case updatedAt = "updated_at"
            case awaitingSince = "awaiting_since"
            case awaitingState = "awaiting_state"
            case heldPushID = "held_push_id"
            case heldTimestamp = "held_timestamp"
            case staleDate = "stale_date"
            case lastUpdate = "last_update"
            case priority10Sends = "priority_10_sends"
        }

        /// What the row holds of the activity, for its state.
        var facts: LiveActivityFacts {
            var facts = LiveActivityFacts(staleDate: Self.date(self.staleDate))
            if let record = self.record, let startedAt = self.startedAt, let updatedAt = self.updatedAt {
                facts.tracked = .init(
                    record: record, startedAt: Self.date(startedAt), endedAt: Self.date(self.endedAt),
                    dismissAt: Self.date(self.dismissAt), updatedAt: Self.date(updatedAt))
            }
            if let awaitingSince = self.awaitingSince {
                facts.awaiting = .init(sentAt: Self.date(awaitingSince), expired: self.awaitingState == "expired")
            }
            return facts
        }

        /// The activity at `now`; `nil` when the row holds none (which the query's condition rules out). An activity
        /// awaiting its token shows its held push, a tracked one its token and activity id.
        func record(now: Date) -> LiveActivityRecord? {
            guard let standing = self.facts.standing(at: now) else { return nil }
            let tracked = !standing.awaitsToken
            let held = both(self.heldPushID, self.heldTimestamp).map { LiveActivityRecord.HeldPush(pushID: $0, timestamp: $1) }
            return LiveActivityRecord(
                name: self.name, id: tracked ? self.id : nil, token: tracked ? self.token : nil, standing: standing,
                updatedAt: tracked ? Self.date(self.updatedAt) : nil, staleDate: Self.date(self.staleDate),
                lastUpdate: self.lastUpdate.flatMap { last in
                    LiveActivityNotification.Event(rawValue: last.event).map { event in
                        LiveActivityOutcome(
                            pushID: last.pushID, event: event, timestamp: last.timestamp, priority: last.priority,
                            status: last.status, reason: last.reason, apnsID: last.apnsID, apnsUniqueID: last.apnsUniqueID,
                            sentAt: Self.date(last.sentAt))
                    }
                },
                priority10SendsThisHour: self.priority10Sends,
                heldPush: tracked ? nil : held)
        }

        private static func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }
        private static func date(_ seconds: Double?) -> Date? { seconds.map { Date(timeIntervalSince1970: $0) } }
    }
}

/// Both values, or `nil` when either is.
private func both<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
