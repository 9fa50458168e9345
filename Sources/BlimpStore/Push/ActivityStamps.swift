import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The `aps.timestamp` of each Live Activity push a flush of ``PushIntake`` accepts. A device ignores an update older
/// than the one it shows, per activity (a name on a device), so:
/// - the caller's `timestamp` is kept as given;
/// - without one, a push is stamped max(the acceptance second, 1 + the last stamp of its app, name and audience as
///   written, 1 + its name's floor). Stamps run ahead of the clock only for one audience pushed more than once a
///   second, never because other audiences share the name.
///
/// The audience as written is the push's stored `audience` JSON (`pushes_by_activity` indexes its md5 with the name):
/// pushes to the same users written in different ways are different audiences. The floor is the name's
/// `activity_names.last_timestamp`, where releases that stamped per name left their last stamp (ahead of the clock
/// for a busy name, and shown by devices); new names have a floor of 0.
///
/// Concurrent flushes stamping one audience take turns: each first takes a transaction advisory lock per audience it
/// stamps, all in one statement in one order (no deadlocks), then reads the last stamps in a second statement, whose
/// snapshot (READ COMMITTED) sees what the previous holder committed.
enum ActivityStamps {
    /// One push of the flush: its app and what the intake queues.
    struct Pending {
        var appID: Int64
        var item: PushSubmission.Item
    }

    /// The timestamp of each of `pushes`, in their order: `nil` for a push that is not a Live Activity's.
    static func timestamps(
        of pushes: [Pending],
        acceptedAt: Int64,
        on connection: PostgresConnection,
        prepared: Bool,
        logger: Logger
    ) async throws -> [Int64?] {
        var stamps: [Int64?] = pushes.map { _ in nil }
        var activities: [(position: Int, appID: Int64, name: String)] = []
        var records: [Record<Column>] = []
        for (position, pending) in pushes.enumerated() {
            guard case .liveActivity(let activity) = pending.item.push.content else { continue }
            stamps[position] = activity.timestamp
            var record = Record<Column>()
            for column in Column.allCases { record.set(column, column.value(of: pending, activity, record: records.count)) }
            records.append(record)
            activities.append((position, pending.appID, activity.name))
        }
        guard activities.contains(where: { stamps[$0.position] == nil }) else { return stamps }
        let json = RawJSON.array(records.map(\.json)).text
        _ = try await LockAudiences(records: json).rows(on: connection, prepared: prepared, logger: logger)
        // A new snapshot: what the flushes that held these locks before committed. The last stamp is the end of a range
        // of `pushes_by_activity`, whose expression no index of a name's pushes answers but this one. It is planned for
        // each flush, not prepared: a plan kept from when `pushes` was nearly empty scans it for every push.
        let read = try await connection.query(
            """
            SELECT md5(r.audience::text),
                   CASE WHEN r.stamped THEN (
                       SELECT p.aps_timestamp FROM pushes p
                       WHERE p.app_id = r.app_id AND md5(p.audience::text || p.activity_name) = md5(r.audience::text || r.name)
                         AND p.aps_timestamp IS NOT NULL
                       ORDER BY p.aps_timestamp DESC LIMIT 1) END,
                   CASE WHEN r.stamped THEN (
                       SELECT n.last_timestamp FROM activity_names n WHERE n.app_id = r.app_id AND n.name = r.name) END
            FROM jsonb_to_recordset(\(json)::jsonb) AS r (\(unescaped: Column.recordFields))
            ORDER BY r.record
            """,
            logger: logger
        ).decode((String, Int64?, Int64?).self).array()
        let audiences = zip(activities, read).map { activity, row in Audience(appID: activity.appID, name: activity.name, md5: row.0) }
        var lasts: [Audience: Int64] = [:]
        for (audience, (_, last, floor)) in zip(audiences, read) {
            lasts[audience] = max(lasts[audience, default: 0], last ?? 0, floor ?? 0)
        }
        // In the flush's order, each push after the last of its audience, the caller's timestamps included.
        for (activity, audience) in zip(activities, audiences) {
            let stamp = stamps[activity.position] ?? max(acceptedAt, lasts[audience, default: 0] + 1)
            stamps[activity.position] = stamp
            lasts[audience] = max(lasts[audience, default: 0], stamp)
        }
        return stamps
    }

    /// A Live Activity's app, name and audience as written.
    private struct Audience: Hashable {
        var appID: Int64
        var name: String
        var md5: String
    }

    /// Takes the advisory lock of each record's app, name and audience as written, for the records that are stamped
    /// (`$1`, a JSON array of ``Column`` records), in one order; two audiences sharing a lock only take turns needlessly.
    struct LockAudiences: RawRowsStatement {
        static let sql = """
            SELECT count(pg_advisory_xact_lock(k.lock)) FROM (
                SELECT DISTINCT hashtextextended(r.app_id::text || ':' || md5(r.audience::text) || r.name, 0) AS lock
                FROM jsonb_to_recordset($1::jsonb) AS r (\(Column.recordFields))
                WHERE r.stamped ORDER BY lock) k
            """
        var records: String

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(self.records)
            return bindings
        }
    }

    /// What the statements read of each Live Activity push, by name: its place among the flush's Live Activity
    /// pushes, its app, name and audience, and whether it needs a stamp (no caller timestamp).
    enum Column: String, RecordColumn {
        case record, appID = "app_id", name, audience, stamped

        var recordType: String {
            switch self {
            case .record: "int"
            case .appID: "bigint"
            case .name: "text"
            case .audience: "jsonb"
            case .stamped: "boolean"
            }
        }

        /// The column's value for `pending`, the flush's `record`th Live Activity push.
        func value(of pending: Pending, _ activity: LiveActivityNotification, record: Int) -> RawJSON? {
            switch self {
            case .record: .integer(Int64(record))
            case .appID: .integer(pending.appID)
            case .name: .string(activity.name)
            case .audience: pending.item.push.audience.json
            case .stamped: .bool(activity.timestamp == nil)
            }
        }
    }
}
