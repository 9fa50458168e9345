import Foundation
import PostgresNIO

/// The tables whose rows age out by a time column and are deleted by rows, an app at a time, in short batches through
/// their primary key (which leads with `app_id` and that column): delivery outcomes that their day's partition does
/// not take with it, and send tallies.
enum AgedRows: String, CaseIterable, Sendable {
    case outcomes = "delivery_outcomes"
    case tallies = "send_tallies"

    /// The column rows age by.
    var timeColumn: String {
        switch self {
        case .outcomes: "sent_at"
        case .tallies: "minute"
        }
    }

    /// Rows one statement deletes at most: a short transaction.
    static let batch = 5_000

    /// Deletes up to ``batch`` rows of `appID` older than `cutoff`; returns how many went.
    func deleteBatch(appID: Int64, before cutoff: Date, on client: PostgresClient, logger: Logger) async throws(StoreError) -> Int {
        try await StoreError.mapping {
            try await client.query(
                """
                WITH doomed AS (SELECT \(unescaped: self.timeColumn) AS at, id FROM \(unescaped: self.rawValue)
                                WHERE app_id = \(appID) AND \(unescaped: self.timeColumn) < \(cutoff) LIMIT \(Self.batch)),
                     gone AS (DELETE FROM \(unescaped: self.rawValue) t USING doomed d
                              WHERE t.app_id = \(appID) AND t.\(unescaped: self.timeColumn) < \(cutoff)
                                AND t.\(unescaped: self.timeColumn) = d.at AND t.id = d.id
                              RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                logger: logger
            ).decode(Int.self).array().first ?? 0
        }
    }
}
