import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Reads pushes back for their reports, scoped to one app, and tells a push whose report aged out from an id never
/// issued.
public struct PushReports: Sendable {
    let client: Database
    let logger: Logger
    /// The deployment's push retention (`BLIMP_RETENTION_PUSHES`), for apps without their own.
    let retention: Duration
    let now: @Sendable () -> Date

    public init(
        client: Database, logger: Logger, retention: Duration = RetentionPolicy().pushes,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.client = client
        self.logger = logger
        self.retention = retention
        self.now = now
    }

    /// For a push not found: the app's push retention when `pushID` is a ``UUIDv7`` older than it, so that its report
    /// aged out and was deleted; `nil` when it is not (the id was never issued, as far as it tells).
    public func expiredRetention(of pushID: UUID, appID: Int64) async throws(StoreError) -> Duration? {
        guard let issued = UUIDv7.time(of: pushID) else { return nil }
        let retention = try await AppStore(client: self.client, logger: self.logger).retention(appID: appID).pushes ?? self.retention
        return self.now().timeIntervalSince(issued) > TimeInterval(retention.components.seconds) ? retention : nil
    }

    /// The report of `pushID` in the app.
    public func report(_ pushID: UUID, appID: Int64) async throws(StoreError) -> PushReport {
        let reports = try await self.fetch(
            "SELECT \(unescaped: Column.selectList) FROM pushes WHERE app_id = \(appID) AND push_id = \(pushID)")
        guard let report = reports.first else { throw .notFound }
        return report
    }

    /// The app's pushes, newest first: `limit` of them from `start` (a push id) on, and the id the next page starts
    /// with, if any.
    public func list(appID: Int64, limit: Int, start: UUID?) async throws(StoreError) -> (reports: [PushReport], next: UUID?) {
        let reports: [PushReport]
        if let start {
            reports = try await self.fetch(
                """
                SELECT \(unescaped: Column.selectList) FROM pushes
                WHERE app_id = \(appID) AND (accepted_at, push_id) <=
                      (SELECT accepted_at, push_id FROM pushes WHERE app_id = \(appID) AND push_id = \(start))
                ORDER BY accepted_at DESC, push_id DESC LIMIT \(limit + 1)
                """)
        } else {
            reports = try await self.fetch(
                """
                SELECT \(unescaped: Column.selectList) FROM pushes WHERE app_id = \(appID)
                ORDER BY accepted_at DESC, push_id DESC LIMIT \(limit + 1)
                """)
        }
        return (Array(reports.prefix(limit)), reports.count > limit ? reports.last?.pushID : nil)
    }

    /// The newest `limit` pushes of a Live Activity name, newest first.
    public func timeline(name: String, appID: Int64, limit: Int) async throws(StoreError) -> [PushReport] {
        try await self.fetch(
            """
            SELECT \(unescaped: Column.selectList) FROM pushes WHERE app_id = \(appID) AND activity_name = \(name)
            ORDER BY accepted_at DESC LIMIT \(limit)
            """)
    }

    /// What a report reads of a push, each column by name. A push being sent counts what its parts have so far; a
    /// finished one has its final counts, and what became of its held copies since.
    enum Column: String, SelectedColumn {
        case pushID = "push_id", operationID = "operation_id", state, failureReason = "failure_reason", kind, event
        case activityName = "activity_name", apsTimestamp = "aps_timestamp", attributesType = "attributes_type", priority
        case acceptedAt = "accepted_at", startedAt = "started_at", finishedAt = "finished_at", counts, payload
        case deliveredAfterToken = "delivered_after_token", expiredAwaitingToken = "expired_awaiting_token"
        case broadcastChannelID = "broadcast_channel_id", broadcastStatus = "broadcast_status", broadcastReason = "broadcast_reason"
        case broadcastRequestID = "broadcast_request_id", broadcastPublishedAt = "broadcast_published_at"

        var expression: String {
            switch self {
            case .counts:
                """
                CASE WHEN state = 'sending'
                     THEN ARRAY(SELECT counts::text FROM push_parts t WHERE t.app_id = pushes.app_id AND t.push_id = pushes.push_id)
                     ELSE ARRAY[counts::text] END
                """
            case .payload: "payload::text"
            case .broadcastStatus: "broadcast_status::int"
            default: self.rawValue
            }
        }
    }

    private func fetch(_ query: PostgresQuery) async throws(StoreError) -> [PushReport] {
        let rows = try await StoreError.mapping { try await self.client.query(query, logger: self.logger).collect() }
        do {
            return try rows.map { row throws(UnreadableColumn) in try Self.report(NamedRow(row)) }
        } catch {
            throw .database(reason: "a push cannot be read: \(error)")
        }
    }

    private static func report(_ row: NamedRow<Column>) throws(UnreadableColumn) -> PushReport {
        var counts = PushCounts()
        for text in try row.decode(.counts, as: [String].self) {
            do {
                counts = counts + PushCounts(try RawJSONParser.parse(text.utf8))
            } catch {
                throw UnreadableColumn(Column.counts.rawValue, "\(error.message) at column \(error.column)")
            }
        }
        counts.deliveredAfterToken = try row.decode(.deliveredAfterToken)
        counts.expiredAwaitingToken = try row.decode(.expiredAwaitingToken)
        return PushReport(
            pushID: try row.decode(.pushID), operationID: try row.decode(.operationID), state: try row.decode(.state),
            failureReason: try row.decode(.failureReason), kind: try row.decode(.kind), event: try row.decodeIfPresent(.event),
            name: try row.decode(.activityName), timestamp: try row.decode(.apsTimestamp),
            attributesType: try row.decode(.attributesType), priority: try row.decodeIfPresent(.priority),
            acceptedAt: try row.decode(.acceptedAt), startedAt: try row.decode(.startedAt), finishedAt: try row.decode(.finishedAt),
            counts: counts, request: try row.json(.payload), broadcast: try Self.broadcast(row))
    }

    private static func broadcast(_ row: NamedRow<Column>) throws(UnreadableColumn) -> PushReport.BroadcastPath? {
        guard let channelID: String = try row.decode(.broadcastChannelID) else { return nil }
        return PushReport.BroadcastPath(
            apnsChannelID: channelID, status: try row.decode(.broadcastStatus), reason: try row.decodeIfPresent(.broadcastReason),
            requestID: try row.decode(.broadcastRequestID), publishedAt: try row.decode(.broadcastPublishedAt))
    }
}
