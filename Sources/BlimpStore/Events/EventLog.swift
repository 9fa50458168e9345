import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The app's event log (`events`), read as a stream. Events are written by the transactions that make the changes they
/// report (the intake's `PUSH_BODY`, the outcomes' `SEND`, `SEND_REJECTED`, `SEND_SKIPPED` and `UNINSTALL`, `PUSH_FINISHED`
/// where a push finishes, `TAG_CHANGE` where tags change, the Live Activity states where they change or their time
/// passes, the schedules' firings and cancellations); this reads them in offset order, only
/// below the oldest transaction still running, so that a reader never passes an event that has yet to commit
/// (``EventOffset``).
public struct EventLog: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The offset a stream starting at `start` reads after, as of `horizon`. The latest is the oldest transaction still
    /// running: an event it or a later one commits is new to the stream.
    public static func offset(for start: EventStreamRequest.Start, at horizon: Horizon) -> EventOffset {
        switch start {
        case .earliest: .start
        case .after(let offset): offset
        case .latest: EventOffset(transaction: horizon.oldestRunning, id: 0)
        }
    }

    /// Where the server's transactions stand (https://www.postgresql.org/docs/current/functions-info.html): every
    /// transaction below `oldestRunning` has ended, so a read of the log sees every event below it; no transaction at
    /// or above `next` had started.
    public struct Horizon: Sendable {
        public var oldestRunning: UInt64
        public var next: UInt64
    }

    public func horizon() async throws(StoreError) -> Horizon {
        let row = try await StoreError.mapping {
            try await self.client.query(
                "SELECT pg_snapshot_xmin(pg_current_snapshot())::text, pg_snapshot_xmax(pg_current_snapshot())::text", logger: self.logger
            ).decode((String, String).self).array().first
        }
        guard let row, let oldestRunning = UInt64(row.0), let next = UInt64(row.1) else {
            throw .database(reason: "the server's snapshot cannot be read")
        }
        return Horizon(oldestRunning: oldestRunning, next: next)
    }

    /// Up to `limit` of the app's events after `offset`, in order, each with its body as the stream sends it.
    public func events(appID: Int64, after offset: EventOffset, limit: Int) async throws(StoreError) -> [StreamedEvent] {
        let query: PostgresQuery = """
            SELECT \(unescaped: Selected.selectList)
            FROM events e
            LEFT JOIN channels c ON c.app_id = e.app_id AND c.channel_id = e.channel_id
            LEFT JOIN pushes p ON p.app_id = e.app_id AND p.push_id = e.push_id
            WHERE e.app_id = \(appID) AND (e.xid, e.id) > (\(String(offset.transaction))::xid8, \(offset.id))
              AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY e.xid, e.id
            LIMIT \(limit)
            """
        return try await self.read(query)
    }

    /// The events `query` selects (``Selected``), in its order.
    func read(_ query: PostgresQuery) async throws(StoreError) -> [StreamedEvent] {
        let rows = try await StoreError.mapping { try await self.client.query(query, logger: self.logger).collect() }
        var events: [StreamedEvent] = []
        do {
            for row in rows {
                if let event = try Self.event(NamedRow(row)) { events.append(event) }
            }
        } catch {
            throw .database(reason: "an event cannot be read: \(error)")
        }
        return events
    }

    /// What a stream reads of an event, with its channel's named user and, from its push, the push object and
    /// whether it lit the screen.
    enum Selected: String, SelectedColumn {
        case transaction, id, eventID = "event_id", type, occurredAt = "occurred_at", processedAt = "processed_at"
        case channelID = "channel_id", namedUserID = "named_user_id", pushID = "push_id", body, payload, alerting

        var expression: String {
            switch self {
            case .transaction: "e.xid::text"
            // Stable, and unique across apps: (xid, id) is.
            case .eventID: "md5(e.xid::text || ':' || e.id)::uuid"
            case .id, .type, .occurredAt, .processedAt, .channelID, .pushID: "e.\(self.rawValue)"
            case .body: "e.body::text"
            case .namedUserID: "c.named_user_id"
            // Each read only for the type that shows it: a fan-out's thousands of SENDs do not each read the push object.
            case .payload: "CASE WHEN e.type = '\(EventType.pushBody.rawValue)' THEN p.payload::text END"
            case .alerting: "CASE WHEN e.type = '\(EventType.send.rawValue)' THEN p.alerting END"
            }
        }
    }

    /// The event of a row; `nil` for a type a later release writes, which is left to that release's readers.
    private static func event(_ row: NamedRow<Selected>) throws(UnreadableColumn) -> StreamedEvent? {
        let typeName: String = try row.decode(.type)
        guard let type = EventType(rawValue: typeName) else { return nil }
        let transactionText: String = try row.decode(.transaction)
        guard let transaction = UInt64(transactionText) else { throw UnreadableColumn(Selected.transaction.rawValue, "not a transaction") }
        let pushID: UUID? = try row.decode(.pushID)
        return StreamedEvent(
            offset: EventOffset(transaction: transaction, id: try row.decode(.id)), id: try row.decode(.eventID), type: type,
            occurredAt: try row.decode(.occurredAt), processedAt: try row.decode(.processedAt), channelID: try row.decode(.channelID),
            namedUserID: try row.decode(.namedUserID), pushID: pushID,
            body: Self.body(of: type, pushID: pushID, stored: try row.decode(.body), payload: try row.decode(.payload), alerting: try row.decode(.alerting)))
    }

    /// A statement that finishes pushes, `WITH finished AS (UPDATE pushes … RETURNING finishedColumns(of: "pushes"))`
    /// followed by ``finishedEvents``, records a `PUSH_FINISHED` event of each push it finished, in its transaction.
    static func finishedColumns(of table: String) -> String {
        ["app_id", "push_id", "state", "counts", "failure_reason", "finished_at"].map { "\(table).\($0)" }.joined(separator: ", ")
    }
    static let finishedEvents = """
        INSERT INTO events (app_id, type, occurred_at, push_id, body)
        SELECT app_id, '\(EventType.pushFinished.rawValue)', finished_at, push_id,
               jsonb_strip_nulls(jsonb_build_object('state', state, 'counts', counts, 'failure_reason', failure_reason))
        FROM finished
        """

    /// An event's `body`: the push id, and what the type tells of it.
    /// - `PUSH_BODY`: the push object as accepted, base64-encoded (`payload`), never trimmed, its `resource` `PUSH`;
    ///   without `payload` once the push's report has aged out.
    /// - `SEND`: whether the push lit the screen (`alerting`).
    /// - `SEND_REJECTED`: APNs's HTTP status (0: no answer) and reason. `SEND_SKIPPED`: the `reason` it was not sent.
    /// - `UNINSTALL`: `decay`, always `false` (APNs said so; Airship's decay is its own guess from inactivity).
    /// - `PUSH_FINISHED`: the push's `state`, `counts` and a failure's `failure_reason`.
    /// - `SCHEDULE_FIRED`, `SCHEDULE_MISSED`: the `schedule_id`, the `occurrence` (its wall-clock time), a local-time
    ///   firing's `time_zone`, and a missed one's `reason`; `SCHEDULE_CANCELLED`: the `schedule_id`.
    /// - `TAG_CHANGE`: the tags added (`add`) and removed (`remove`), and the channel's tags now (`current`), by group.
    /// - `LIVE_ACTIVITY_*`: the activity's `name` and `activity_id`; an active one's `started_at`, an ended one's
    ///   `ended_by` and `dismissal_date` (``activityEvents(_:from:details:)``).
    static func body(of type: EventType, pushID: UUID?, stored: String?, payload: String?, alerting: Bool?) -> RawJSON {
        var members: [RawJSON.Member] = pushID.map { [.init("push_id", .string($0.lowercaseString))] } ?? []
        switch type {
        case .pushBody:
            members.append(.init("resource", .string("PUSH")))
            members.append(.init("trimmed", .bool(false)))
            if let payload { members.append(.init("payload", .string(Data(payload.utf8).base64EncodedString()))) }
        case .send:
            members.append(.init("alerting", .bool(alerting ?? false)))
        case .sendRejected, .sendSkipped, .uninstall, .tagChange, .pushFinished, .scheduleFired, .scheduleMissed, .scheduleCancelled, .liveActivityAwaitingToken,
            .liveActivityActive, .liveActivityEnded, .liveActivityDismissed, .liveActivityExpired:
            if let stored, case .object(let details)? = try? RawJSONParser.parse(Array(stored.utf8)) { members += details }
        }
        return .object(members)
    }
}
