import BlimpCore
import Foundation
import PostgresNIO

/// A Live Activity name as the console lists it: how many channels track it, by state, and its newest push. A name
/// shared by many activities (each user's `delivery`) is counted across them, and its newest push is the last accepted
/// to any of its audiences.
public struct ActivityNameSummary: Sendable, Equatable {
    public var name: String
    /// From the last rollup; `nil` when the name has only been pushed to, or is newer than the rollup.
    public var active: Int?
    public var ended: Int?
    public var expired: Int?
    public var lastPushID: UUID?
    public var lastPushState: PushState?
    public var lastPushEvent: LiveActivityNotification.Event?
    public var lastPushAt: Date?

    init(
        name: String, active: Int?, ended: Int?, expired: Int?, lastPushID: UUID?, lastPushState: PushState?,
        lastPushEvent: LiveActivityNotification.Event?, lastPushAt: Date?
    ) {
        (self.name, self.active, self.ended, self.expired) = (name, active, ended, expired)
        (self.lastPushID, self.lastPushState, self.lastPushEvent, self.lastPushAt) = (lastPushID, lastPushState, lastPushEvent, lastPushAt)
    }

    /// What a listing selects of a name (`n`), its rollup (`r`) and its last push (`p`), each column by name.
    enum Column: String, SelectedColumn {
        case name, active, ended, expired, lastPushID = "last_push_id", lastPushState = "last_push_state"
        case lastPushEvent = "last_push_event", lastPushAt = "last_push_at"

        var expression: String {
            switch self {
            case .name: "n.name"
            case .active, .ended, .expired: "r.\(self.rawValue)::int"
            case .lastPushID: "p.push_id"
            case .lastPushState: "p.state"
            case .lastPushEvent: "p.event"
            case .lastPushAt: "p.accepted_at"
            }
        }
    }

    /// The name in `row`, or the column that cannot be read.
    init(_ row: NamedRow<Column>) throws(UnreadableColumn) {
        self.init(
            name: try row.decode(.name), active: try row.decode(.active), ended: try row.decode(.ended),
            expired: try row.decode(.expired), lastPushID: try row.decode(.lastPushID),
            lastPushState: try row.decode(.lastPushState, as: String?.self).flatMap(PushState.init(rawValue:)),
            lastPushEvent: try row.decode(.lastPushEvent), lastPushAt: try row.decode(.lastPushAt))
    }
}

extension ConsoleStore {
    /// The app's Live Activity names after `cursor` in name order: every name devices track (as of the last rollup)
    /// or pushes were sent to.
    public func activityNames(appID: Int64, after cursor: String?, limit: Int) async throws(StoreError) -> [ActivityNameSummary] {
        try await self.summaries(
            """
            WITH names AS (
                (SELECT name FROM activity_name_rollups WHERE app_id = \(appID) AND name > \(cursor ?? "") ORDER BY name LIMIT \(limit))
                UNION
                (SELECT name FROM activity_names WHERE app_id = \(appID) AND name > \(cursor ?? "") ORDER BY name LIMIT \(limit)))
            SELECT \(unescaped: ActivityNameSummary.Column.selectList) FROM (SELECT name FROM names ORDER BY name LIMIT \(limit)) n
            \(unescaped: Self.summaryJoins(appID: appID)) ORDER BY n.name
            """)
    }

    /// Joins a name (`n.name`) with its rollup and its newest push, whatever its audience (one step down
    /// `pushes_by_activity_name_and_acceptance`). The app id is a number, written into the text.
    private static func summaryJoins(appID: Int64) -> String {
        """
        LEFT JOIN activity_name_rollups r ON r.app_id = \(appID) AND r.name = n.name
        LEFT JOIN LATERAL (
            SELECT push_id, state, event, accepted_at FROM pushes
            WHERE app_id = \(appID) AND activity_name = n.name ORDER BY accepted_at DESC LIMIT 1) p ON true
        """
    }

    private func summaries(_ query: PostgresQuery) async throws(StoreError) -> [ActivityNameSummary] {
        try await StoreError.mapping {
            var names: [ActivityNameSummary] = []
            let rows = try await self.client.query(query, logger: self.logger)
            for try await row in rows { names.append(try ActivityNameSummary(NamedRow(row))) }
            return names
        }
    }
}
