import BlimpCore
import Foundation
import BlimpStore
import PostgresNIO

/// Pushes written straight into the tables, as if finished (or still queued) at a time in the past: what the
/// janitor's retention tests and benchmark start from without waiting days.
public enum FinishedPushes {
    /// Inserts `count` alert pushes of the app in `state`, finished at `finishedAt` (none for an unfinished state),
    /// accepted a minute before (their ids, UUIDv7, carry that time), each with `parts` parts; returns their ids.
    @discardableResult
    public static func insert(
        _ count: Int, appID: Int64, state: PushState = .done, finishedAt: Date, parts: Int = 1, in client: Database
    ) async throws -> [UUID] {
        let acceptedAt = finishedAt.addingTimeInterval(-60)
        let ids = (0..<count).map { _ in UUIDv7.make(at: acceptedAt) }
        let finished: Date? = state.isFinished ? finishedAt : nil
        let partState = state == .queued ? "queued" : state.rawValue
        try await client.query(
            """
            INSERT INTO pushes (app_id, push_id, operation_id, state, kind, audience, payload, accepted_at, not_before, finished_at)
            SELECT \(appID), id, gen_random_uuid(), \(state.rawValue), 'alert', '"all"',
                   '{"audience": "all", "device_types": ["ios"], "notification": {"alert": "hi"}}', \(acceptedAt), \(acceptedAt), \(finished)
            FROM unnest(\(ids)::uuid[]) AS id
            """,
            logger: TestDatabase.logger)
        try await client.query(
            """
            INSERT INTO push_parts (app_id, push_id, part, after_channel_id, through_channel_id, cursor_channel_id, state, accepted_at)
            SELECT \(appID), id, part, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
                   '00000000-0000-0000-0000-000000000000', \(partState), \(acceptedAt)
            FROM unnest(\(ids)::uuid[]) AS id, generate_series(0, \(parts - 1)) AS part
            """,
            logger: TestDatabase.logger)
        return ids
    }

    /// How many pushes, and push parts, the app has.
    public static func counts(appID: Int64, in client: Database) async throws -> (pushes: Int, parts: Int) {
        let rows = try await client.query(
            """
            SELECT (SELECT count(*) FROM pushes WHERE app_id = \(appID))::int, (SELECT count(*) FROM push_parts WHERE app_id = \(appID))::int
            """,
            logger: TestDatabase.logger
        ).decode((Int, Int).self)
        for try await counts in rows { return counts }
        return (0, 0)
    }
}
