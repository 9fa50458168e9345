import Foundation
import PostgresNIO

/// Delivery outcomes and send tallies are kept by age. `delivery_outcomes` is partitioned by day (``OutcomePartitions``):
/// a day older than every app's cutoff is dropped whole; rows older than their app's cutoff in a day kept for another
/// app are deleted by rows through the primary key (``AgedRows``), in short batches. The default retention is kept to
/// the day (its rows go with their partition, up to a day after their cutoff); an app whose retention differs from the
/// default is kept to its cutoff exactly, as are send tallies, which are few and not partitioned.
extension DispatchStore {
    /// Days after today whose partitions the janitor keeps ready, so that no row waits in the DEFAULT partition unless
    /// the janitor stops for that long.
    public static let outcomePartitionsAhead = 3

    /// Creates `delivery_outcomes`' missing partitions for today and the ``outcomePartitionsAhead`` days after (a
    /// ``Janitor`` chore); returns how many.
    public func createOutcomePartitions(now: Date) async throws(StoreError) -> Int {
        try await OutcomePartitions(client: self.client, logger: self.logger)
            .create(from: now, through: now + Double(Self.outcomePartitionsAhead) * OutcomePartitions.day)
    }

    /// Deletes delivery outcomes and send tallies older than their app's cutoff (`cutoffs` for apps whose retention
    /// differs from the default, else `defaultCutoff`), for about `budget` at most (a ``Janitor`` chore): drops the
    /// partitions older than every cutoff, deletes the older rows of each app that kept partitions (or the DEFAULT
    /// one) hold in batches, then moves on the outcomes from before partitions (``UnpartitionedOutcomes``). What the
    /// budget leaves is done by the next call. Returns how many rows went, a dropped table's counted by PostgreSQL's
    /// estimate.
    public func trimOutcomes(defaultCutoff: Date, cutoffs: [Int64: Date], budget: Duration) async throws(StoreError) -> Int {
        let deadline = ContinuousClock.now + budget
        let partitions = OutcomePartitions(client: self.client, logger: self.logger)
        let oldestCutoff = cutoffs.values.reduce(defaultCutoff, min)
        let kept = try await partitions.list()
        var deleted = 0
        for partition in kept where partition.end <= oldestCutoff {
            // Rows of a partition due to be dropped are never deleted one by one: whatever stops a drop ends the round.
            guard ContinuousClock.now < deadline, try await partitions.drop(partition) else { return deleted }
            deleted += partition.estimatedRows
            self.logger.info("delivery outcomes partition dropped", metadata: ["partition": "\(partition.name)", "rows": "\(partition.estimatedRows)"])
        }
        // The default retention's rows go with their partition: by rows only up to the last partition boundary before
        // the cutoff (rows in partitions kept for a longer retention, or in the DEFAULT partition).
        let defaultBoundary = kept.flatMap { [$0.start, $0.end] }.filter { $0 <= defaultCutoff }.max() ?? defaultCutoff
        let appIDs = try await self.appIDs()
        for table in AgedRows.allCases {
            for appID in appIDs {
                let cutoff = cutoffs[appID] ?? (table == .outcomes ? defaultBoundary : defaultCutoff)
                var after: AgedRows.Key?
                repeat {
                    guard ContinuousClock.now < deadline else { break }
                    let batch = try await table.deleteBatch(appID: appID, before: cutoff, after: after, on: self.client, logger: self.logger)
                    deleted += batch.deleted
                    after = batch.last
                } while after != nil
            }
        }
        let drained = try await UnpartitionedOutcomes(client: self.client, logger: self.logger)
            .drain(appIDs: appIDs, defaultCutoff: defaultCutoff, cutoffs: cutoffs, deadline: deadline)
        if drained.moved > 0 { self.logger.info("delivery outcomes moved into partitions", metadata: ["count": "\(drained.moved)"]) }
        return deleted + drained.dropped
    }

    /// Every app's id, in order.
    private func appIDs() async throws(StoreError) -> [Int64] {
        try await StoreError.mapping {
            try await self.client.query("SELECT id FROM apps ORDER BY id", logger: self.logger).decode(Int64.self).array()
        }
    }
}
