import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// Delivery outcomes live in day partitions made ahead by the janitor and are trimmed by age: whole days dropped,
/// an app's older rows deleted in batches within a budget, send tallies alike; the upgrade from the unpartitioned
/// table keeps outcomes readable and ends with the old table gone.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct OutcomeRetentionTests {
    /// Noon on 10 January 2030 (UTC): later than any partition a test template was migrated with.
    static let now = Date(timeIntervalSince1970: 1_893_456_000 + 9 * 86_400 + 12 * 3_600)
    static let hour: TimeInterval = 3_600
    static let day: TimeInterval = 86_400

    @Test func partitionsAreMadeAheadAndTakeTheRowsTheDefaultPartitionHeld() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = DispatchStore(client: client, logger: TestDatabase.logger)
            try await Self.insertOutcomes(appID: 1, at: [Self.now], in: client)
            #expect(try await Self.partitionsHolding(in: client) == ["delivery_outcomes_default"])
            #expect(try await store.createOutcomePartitions(now: Self.now) == 1 + DispatchStore.outcomePartitionsAhead)
            #expect(try await store.createOutcomePartitions(now: Self.now) == 0)
            let days = try await OutcomePartitions(client: client, logger: TestDatabase.logger).list().suffix(4)
            #expect(days.map(\.name) == ["delivery_outcomes_20300110", "delivery_outcomes_20300111", "delivery_outcomes_20300112", "delivery_outcomes_20300113"])
            #expect(days.first?.start == OutcomePartitions.startOfDay(Self.now) && days.last?.end == OutcomePartitions.startOfDay(Self.now) + 4 * Self.day)
            #expect(try await Self.partitionsHolding(in: client) == ["delivery_outcomes_20300110"])
            try await Self.insertOutcomes(appID: 1, at: [Self.now + 2 * Self.day], in: client)
            #expect(try await Self.partitionsHolding(in: client) == ["delivery_outcomes_20300110", "delivery_outcomes_20300112"])
        }
    }

    /// A long read of the outcomes holds the DEFAULT partition, which creating a day must lock: the janitor gives up
    /// after the lock timeout instead of queueing the workers' inserts behind it, and creates the days next round.
    @Test func aDayWhosePartitionIsHeldIsLeftForTheNextRound() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let store = DispatchStore(client: client, logger: TestDatabase.logger)
            try await client.withTransaction(logger: TestDatabase.logger) { reader in
                try await reader.query("SELECT count(*) FROM delivery_outcomes", logger: TestDatabase.logger)
                let start = ContinuousClock.now
                #expect(try await store.createOutcomePartitions(now: Self.now) == 0)
                #expect(ContinuousClock.now - start < .seconds(10))
            }
            #expect(try await store.createOutcomePartitions(now: Self.now) == 1 + DispatchStore.outcomePartitionsAhead)
        }
    }

    /// Days 1 to 10 January hold an outcome and a tally an hour for three apps: one on the default retention (five days),
    /// one kept a day, one kept eight. The first day is older than every cutoff and is dropped; the others' older rows
    /// go by rows: the short and long retentions to their cutoff, the default to its day.
    @Test func trimmingDropsOldDaysAndDeletesEachAppsOlderRows() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (usual, brief, long) = try await (Self.createApp("usual", in: client), Self.createApp("brief", in: client), Self.createApp("long", in: client))
            let partitions = OutcomePartitions(client: client, logger: TestDatabase.logger)
            let first = OutcomePartitions.startOfDay(Self.now - 9 * Self.day)
            #expect(try await partitions.create(from: first, through: Self.now) == 10)
            let hours = (0..<(9 * 24 + 12)).map { first + Double($0) * Self.hour }
            for app in [usual, brief, long] {
                try await Self.insertOutcomes(appID: app, at: hours, in: client)
                try await Self.insertTallies(appID: app, at: hours, in: client)
            }
            let store = DispatchStore(client: client, logger: TestDatabase.logger)
            let cutoffs = [brief: Self.now - Self.day, long: Self.now - 8 * Self.day]
            let deleted = try await store.trimOutcomes(defaultCutoff: Self.now - 5 * Self.day, cutoffs: cutoffs, budget: .seconds(60))

            #expect(try await partitions.list().first?.name == "delivery_outcomes_20300102")
            let oldest = try await Self.oldest(in: client)
            #expect(oldest["delivery_outcomes", default: [:]] == [usual: Self.now - 5 * Self.day - 12 * Self.hour, brief: Self.now - Self.day, long: Self.now - 8 * Self.day])
            #expect(oldest["send_tallies", default: [:]] == [usual: Self.now - 5 * Self.day, brief: Self.now - Self.day, long: Self.now - 8 * Self.day])
            // By rows: the usual app's outcomes of 2 to 4 January, the brief app's up to its cutoff from the 2nd, the long
            // app's first 12 hours of the 2nd; every app's tallies up to its cutoff from the 1st.
            let byRows = (3 * 24 + (7 * 24 + 12) + 12) + ((4 * 24 + 12) + (8 * 24 + 12) + (24 + 12))
            #expect(deleted >= byRows)
            #expect(try await store.trimOutcomes(defaultCutoff: Self.now - 5 * Self.day, cutoffs: cutoffs, budget: .seconds(60)) == 0)
        }
    }

    /// A spent budget stops the trim between batches: none when it is spent at the start, one batch when it is spent
    /// during the first.
    @Test func trimmingStopsWhenItsBudgetIsSpent() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let app = try await Self.createApp("busy", in: client)
            let old = (0..<(3 * AgedRows.batch)).map { Self.now - Self.day - Double($0) }
            try await Self.insertOutcomes(appID: app, at: old, in: client)
            let store = DispatchStore(client: client, logger: TestDatabase.logger)
            let cutoffs = [app: Self.now - Self.hour]
            #expect(try await store.trimOutcomes(defaultCutoff: Self.now, cutoffs: cutoffs, budget: .zero) == 0)
            #expect(try await store.trimOutcomes(defaultCutoff: Self.now, cutoffs: cutoffs, budget: .microseconds(1)) <= AgedRows.batch)
            #expect(try await store.trimOutcomes(defaultCutoff: Self.now, cutoffs: cutoffs, budget: .seconds(60)) >= 2 * AgedRows.batch)
            #expect(try await Self.oldest(in: client)["delivery_outcomes"] == nil)
        }
    }

    /// A database at the previous version with outcomes: the upgrade moves the last two hours into the partitioned
    /// table at once; the trim moves the rest still within retention and drops the old table with what is past it.
    @Test func upgradingKeepsOutcomesReadableAndDrainsTheOldTable() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            let first = try #require(Schema.migrations.first { $0.name.hasPrefix("delivery outcomes by time") })
            try await Schema.apply(to: client, through: first.version - 1, logger: TestDatabase.logger)
            let app = try await Self.createApp("upgraded", in: client)
            let channel = UUID()
            let now = Date()
            let recent = (0..<30).map { now - Double($0) * 60 }
            let older = (0..<40).map { now - 3 * Self.hour - Double($0) * Self.hour }
            let expired = (0..<20).map { now - 8 * Self.day - Double($0) * Self.hour }
            for at in recent + older + expired {
                try await client.query(
                    """
                    INSERT INTO delivery_outcomes (app_id, push_id, token, channel_id, status, sent_at)
                    VALUES (\(app), \(UUID()), 'token', \(channel), 200, \(at))
                    """,
                    logger: TestDatabase.logger)
            }
            try await Schema.apply(to: client, logger: TestDatabase.logger)

            let console = ConsoleStore(client: client, logger: TestDatabase.logger)
            #expect(try await console.outcomes(channelID: channel, appID: app, limit: 100).count == 30)
            #expect(try await Self.count("delivery_outcomes_unpartitioned", in: client) == 60)
            let store = DispatchStore(client: client, logger: TestDatabase.logger)
            _ = try await store.trimOutcomes(defaultCutoff: now - 7 * Self.day, cutoffs: [:], budget: .seconds(60))
            let kept = try await console.outcomes(channelID: channel, appID: app, limit: 100)
            #expect(kept.map(\.sentAt.timeIntervalSince1970).map { $0.rounded() } == (recent + older).map { $0.timeIntervalSince1970.rounded() })
            #expect(try await client.query("SELECT to_regclass('delivery_outcomes_unpartitioned') IS NULL", logger: TestDatabase.logger).decode(Bool.self).array() == [true])
            #expect(try await Self.count("delivery_outcomes_default", in: client) == 0)
        }
    }

    /// The previous release's trim, one statement over the whole table, would hold the upgrade's rename (and every
    /// insert queued behind it) until it ended: the upgrade cancels it first. Here the trim waits on a row another
    /// transaction holds, so it runs until cancelled; whichever of the trim and the upgrade ends first lets the row go.
    @Test func upgradingCancelsThePreviousReleasesTrim() async throws {
        try await TestDatabase.withFreshDatabase(migrated: false) { _, client in
            let last = try #require(Schema.migrations.first { $0.name.hasPrefix("delivery outcomes by time") })
            try await Schema.apply(to: client, through: last.version, logger: TestDatabase.logger)
            let app = try await Self.createApp("trimmed", in: client)
            let now = Date()
            try await Self.insertOutcomes(appID: app, at: (0..<25).map { now - 2 * Self.hour - Double($0) * 60 }, in: client)

            let (locked, lockTaken) = AsyncStream<Void>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await client.withTransaction(logger: TestDatabase.logger) { connection in
                    try await connection.query("SELECT 1 FROM delivery_outcomes ORDER BY sent_at LIMIT 1 FOR UPDATE", logger: TestDatabase.logger)
                    lockTaken.finish()
                    for await _ in released {}
                }
            }
            for await _ in locked {}
            let trim = Task {
                defer { release.finish() }
                return try await client.query(Self.previousReleasesTrim(now: now), logger: TestDatabase.logger).decode(Int.self).array()
            }
            try await Self.waitUntilTrimWaitsOnTheRow(in: client)
            let upgrade = Task {
                defer { release.finish() }
                try await Schema.apply(to: client, logger: TestDatabase.logger)
            }

            let trimmed = await trim.result
            try await upgrade.value
            try await holder.value
            #expect(throws: PSQLError.self) { try trimmed.get() }
            if case .failure(let error as PSQLError) = trimmed { #expect(error.serverInfo?[.sqlState] == "57014") }
            #expect(try await Self.count("delivery_outcomes", in: client) + Self.count("delivery_outcomes_unpartitioned", in: client) == 25)
        }
    }

    // MARK: - Helpers

    /// The outcome trim of the release before the partitions, as it ran: each token's outcomes beyond its newest 20
    /// that are over an hour old, in one statement over the whole table.
    static func previousReleasesTrim(now: Date) -> PostgresQuery {
        """
        WITH gone AS (
        DELETE FROM delivery_outcomes d
        USING (SELECT ctid FROM (
                   SELECT ctid, sent_at, row_number() OVER (PARTITION BY app_id, channel_id, token ORDER BY sent_at DESC) AS newest
                   FROM delivery_outcomes) ranked
               WHERE newest > \(20) AND sent_at < \(now.addingTimeInterval(-3600))) old
        WHERE d.ctid = old.ctid
        RETURNING 1)
        SELECT count(*)::int FROM gone
        """
    }

    /// Polls until the previous release's trim is waiting for a lock (at most a minute).
    static func waitUntilTrimWaitsOnTheRow(in client: Database) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let waiting = try await client.query(
                """
                SELECT count(*)::int FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%row_number() OVER%'
                """,
                logger: TestDatabase.logger
            ).decode(Int.self).array()[0]
            if waiting > 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the trim never waited on the held row")
    }

    /// An app made in SQL with the columns every version has, so that it fits the previous version's schema too.
    static func createApp(_ name: String, in client: Database) async throws -> Int64 {
        let key = String((name + String(repeating: "x", count: 22)).prefix(22))
        return try await client.query(
            """
            INSERT INTO apps (app_key, name, bundle_id, app_secret_sha256, master_secret_sha256, apns_key_id, apns_team_id,
                              apns_environment, apns_key_sealed)
            VALUES (\(key), \(name), 'com.example.app', '\\x00', '\\x00', 'KEY', 'TEAM', 'sandbox', '\\x00')
            RETURNING id
            """,
            logger: TestDatabase.logger
        ).decode(Int64.self).array()[0]
    }

    static func insertOutcomes(appID: Int64, at times: [Date], in client: Database) async throws {
        try await client.query(
            """
            INSERT INTO delivery_outcomes (app_id, push_id, token, status, sent_at)
            SELECT \(appID), gen_random_uuid(), 'token', 200, at FROM unnest(\(times)::timestamptz[]) at
            """,
            logger: TestDatabase.logger)
    }

    static func insertTallies(appID: Int64, at times: [Date], in client: Database) async throws {
        try await client.query(
            "INSERT INTO send_tallies (app_id, minute, status, sends) SELECT \(appID), at, 200, 1 FROM unnest(\(times)::timestamptz[]) at",
            logger: TestDatabase.logger)
    }

    /// The partitions that hold outcomes, by name.
    static func partitionsHolding(in client: Database) async throws -> [String] {
        try await client.query(
            "SELECT DISTINCT tableoid::regclass::text FROM delivery_outcomes ORDER BY 1", logger: TestDatabase.logger
        ).decode(String.self).array()
    }

    /// Each app's oldest outcome and tally, by table.
    static func oldest(in client: Database) async throws -> [String: [Int64: Date]] {
        var oldest: [String: [Int64: Date]] = [:]
        let rows = try await client.query(
            """
            SELECT 'delivery_outcomes', app_id, min(sent_at) FROM delivery_outcomes GROUP BY app_id
            UNION ALL SELECT 'send_tallies', app_id, min(minute) FROM send_tallies GROUP BY app_id
            """,
            logger: TestDatabase.logger)
        for try await (table, app, at) in rows.decode((String, Int64, Date).self) { oldest[table, default: [:]][app] = at }
        return oldest
    }

    static func count(_ table: String, in client: Database) async throws -> Int {
        try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table)"), logger: TestDatabase.logger)
            .decode(Int.self).array()[0]
    }
}
