import Foundation
import PostgresNIO

/// The tables whose rows age out by a time column and are deleted by rows, an app at a time, in short batches through
/// their primary key (`app_id`, the time column, a surrogate `id`): delivery outcomes that their day's partition does
/// not take with it, and send tallies.
enum AgedRows: String, CaseIterable, Sendable {
    case outcomes = "delivery_outcomes"
    case tallies = "send_tallies"

    /// A row's place in the primary key after its app: where a batch ends and the next starts.
    struct Key: Sendable, Equatable {
        let at: Date
        let id: Int64
    }

    /// The column rows age by.
    var timeColumn: String {
        switch self {
        case .outcomes: "sent_at"
        case .tallies: "minute"
        }
    }

    /// Rows one statement deletes at most: a short transaction.
    static let batch = 5_000

    /// Deletes the oldest ``batch`` rows of `appID` older than `cutoff` and after `after`; returns how many went and,
    /// when the batch was full, the last one's key, after which the next batch starts. The batch is a range of the key
    /// found first (its last row), not a join with the rows found, so that each batch reads its own rows however many
    /// more are older than the cutoff.
    func deleteBatch(
        appID: Int64, before cutoff: Date, after: Key?, on client: Database, logger: Logger
    ) async throws(StoreError) -> (deleted: Int, last: Key?) {
        let after = after ?? Key(at: .distantPast, id: .min)
        let at = self.timeColumn
        return try await StoreError.mapping {
            let last = try await client.query(
                """
                SELECT \(unescaped: at), id FROM \(unescaped: self.rawValue)
                WHERE app_id = \(appID) AND \(unescaped: at) < \(cutoff) AND (\(unescaped: at), id) > (\(after.at), \(after.id))
                ORDER BY \(unescaped: at), id OFFSET \(Self.batch - 1) LIMIT 1
                """,
                logger: logger
            ).decode((Date, Int64).self).array().first.map { Key(at: $0.0, id: $0.1) }
            let through = last ?? Key(at: cutoff, id: .max)
            let deleted = try await client.query(
                """
                WITH gone AS (
                    DELETE FROM \(unescaped: self.rawValue)
                    WHERE app_id = \(appID) AND \(unescaped: at) < \(cutoff)
                      AND (\(unescaped: at), id) > (\(after.at), \(after.id)) AND (\(unescaped: at), id) <= (\(through.at), \(through.id))
                    RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                logger: logger
            ).decode(Int.self).array().first ?? 0
            return (deleted, last)
        }
    }
}
