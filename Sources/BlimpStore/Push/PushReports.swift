import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Reads pushes back for their reports, scoped to one app.
public struct PushReports: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The report of `pushID` in the app.
    public func report(_ pushID: UUID, appID: Int64) async throws(StoreError) -> PushReport {
        let reports = try await self.fetch(
            "SELECT \(unescaped: Self.columns) FROM pushes WHERE app_id = \(appID) AND push_id = \(pushID)")
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
                SELECT \(unescaped: Self.columns) FROM pushes
                WHERE app_id = \(appID) AND (accepted_at, push_id) <=
                      (SELECT accepted_at, push_id FROM pushes WHERE app_id = \(appID) AND push_id = \(start))
                ORDER BY accepted_at DESC, push_id DESC LIMIT \(limit + 1)
                """)
        } else {
            reports = try await self.fetch(
                """
                SELECT \(unescaped: Self.columns) FROM pushes WHERE app_id = \(appID)
                ORDER BY accepted_at DESC, push_id DESC LIMIT \(limit + 1)
                """)
        }
        return (Array(reports.prefix(limit)), reports.count > limit ? reports.last?.pushID : nil)
    }

    /// The newest `limit` pushes of a Live Activity name, newest first.
    public func timeline(name: String, appID: Int64, limit: Int) async throws(StoreError) -> [PushReport] {
        try await self.fetch(
            """
            SELECT \(unescaped: Self.columns) FROM pushes WHERE app_id = \(appID) AND activity_name = \(name)
            ORDER BY accepted_at DESC LIMIT \(limit)
            """)
    }

    /// A push being sent counts what its parts have so far; a finished one has its final counts.
    private static let columns = """
        push_id, operation_id, state, failure_reason, kind, event, activity_name, aps_timestamp, attributes_type, priority,
        accepted_at, started_at, finished_at,
        CASE WHEN state = 'sending'
             THEN ARRAY(SELECT counts::text FROM push_parts t WHERE t.app_id = pushes.app_id AND t.push_id = pushes.push_id)
             ELSE ARRAY[counts::text] END,
        payload::text
        """

    private typealias Row = (UUID, UUID, String, String?, String, String?, String?, Int64?, String?, Int16?, Date, Date?, Date?, [String], String)

    private func fetch(_ query: PostgresQuery) async throws(StoreError) -> [PushReport] {
        try await StoreError.mapping {
            let rows = try await self.client.query(query, logger: self.logger)
            var reports: [PushReport] = []
            for try await (pushID, operationID, state, failureReason, kind, event, name, timestamp, attributesType, priority,
                           acceptedAt, startedAt, finishedAt, counts, request) in rows.decode(Row.self) {
                guard let state = PushState(rawValue: state) else { throw StoreError.database(reason: "unknown push state \(state)") }
                reports.append(PushReport(
                    pushID: pushID, operationID: operationID, state: state, failureReason: failureReason, kind: kind,
                    event: event, name: name, timestamp: timestamp, attributesType: attributesType,
                    priority: Int(priority ?? 10), acceptedAt: acceptedAt, startedAt: startedAt, finishedAt: finishedAt,
                    counts: try counts.reduce(PushCounts()) { $0 + PushCounts(try RawJSONParser.parse($1.utf8)) },
                    request: try RawJSONParser.parse(request.utf8, numberLength: RawJSONParser.storedNumberLength)))
            }
            return reports
        }
    }
}
