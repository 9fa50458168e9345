import Foundation
import Logging
import PostgresNIO

/// `delivery_outcomes`' partitions by range of `sent_at`, one per UTC day (`delivery_outcomes_20261127`), beside the
/// DEFAULT partition that takes any row no day holds and the migration's `delivery_outcomes_upgrade`: which exist,
/// creating the missing days, dropping a whole one. Partitions are found by their bounds in the catalog, not by name.
///
/// Creating and dropping a partition need short locks that ordinary reads and inserts wait behind (dropping takes the
/// parent table's; creating, the DEFAULT partition's). Each runs under a lock timeout of
/// ``lockTimeout``: a partition whose lock is not had by then is left for the janitor's next round, so a long
/// query never holds the outcomes' writers up behind the janitor for longer than that. DDL takes no bind parameters:
/// the names and bounds written into it come from dates, never from input.
struct OutcomePartitions: Sendable {
    let client: Database
    let logger: Logger

    /// One day partition (or the upgrade's) and the times it holds: from `start`, up to but not including `end`.
    struct Partition: Sendable, Equatable {
        let name: String
        let start: Date
        let end: Date
        /// PostgreSQL's estimate of its rows (`pg_class.reltuples`, 0 before it was first analyzed).
        let estimatedRows: Int
    }

    static let table = "delivery_outcomes"
    static let defaultPartition = "delivery_outcomes_default"
    /// How long creating or dropping a partition waits for its lock before leaving it for the next round.
    static let lockTimeout = "2s"
    static let day: TimeInterval = 86_400

    /// The start of `date`'s UTC day: where day partitions begin and end.
    static func startOfDay(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / Self.day).rounded(.down) * Self.day)
    }

    /// The name of the partition of the UTC day starting at `start`: `delivery_outcomes_YYYYMMDD`.
    static func name(ofDayStarting start: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let day = calendar.dateComponents([.year, .month, .day], from: start)
        return Self.table + "_" + String(format: "%04d%02d%02d", day.year!, day.month!, day.day!)
    }

    /// A timestamptz literal of `date` (whole seconds, UTC) for DDL.
    static func literal(_ date: Date) -> String {
        "'" + ISO8601DateFormatter().string(from: date) + "'::timestamptz"
    }

    /// The partitions with bounds, oldest first (the DEFAULT partition is not among them). The bounds are read back
    /// as PostgreSQL writes them (in the session's time zone) and cast in the same session.
    func list() async throws(StoreError) -> [Partition] {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT c.relname::text, b[1]::timestamptz, b[2]::timestamptz, greatest(c.reltuples, 0)::bigint
                FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid,
                     regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)') b
                WHERE i.inhparent = to_regclass(\(Self.table)) AND b IS NOT NULL
                ORDER BY 2
                """,
                logger: self.logger)
            var partitions: [Partition] = []
            for try await (name, start, end, rows) in rows.decode((String, Date, Date, Int64).self) {
                partitions.append(Partition(name: name, start: start, end: end, estimatedRows: Int(rows)))
            }
            return partitions
        }
    }

    /// Creates a partition for each UTC day from `first`'s through `last`'s that no partition covers yet, moving into
    /// it any rows of its day that the DEFAULT partition took meanwhile; returns how many were created. When a day's
    /// lock is not had in time, it and the days after are left for the next call.
    func create(from first: Date, through last: Date) async throws(StoreError) -> Int {
        var created = 0
        for day in try await self.missingDays(from: first, through: last) {
            guard try await self.create(day: day) else { break }
            created += 1
        }
        return created
    }

    /// The starts of the UTC days from `first`'s through `last`'s that no partition covers.
    func missingDays(from first: Date, through last: Date) async throws(StoreError) -> [Date] {
        let existing = try await self.list()
        return stride(from: Self.startOfDay(first), through: last, by: Self.day).filter { day in
            !existing.contains { $0.start <= day && day < $0.end }
        }
    }

    /// Creates the partition of the day starting at `start` in one transaction: a table like the parent, filled with
    /// the day's rows taken from the DEFAULT partition (none unless the janitor stopped for days), then attached. The
    /// DEFAULT partition is locked first, as attaching it would: no row of the day can slip in meanwhile.
    private func create(day start: Date) async throws(StoreError) -> Bool {
        let (name, from, to) = (Self.name(ofDayStarting: start), Self.literal(start), Self.literal(start + Self.day))
        return try await self.underLockTimeout([
            "LOCK TABLE \(Self.defaultPartition) IN ACCESS EXCLUSIVE MODE",
            "CREATE TABLE \(name) (LIKE \(Self.table) INCLUDING DEFAULTS)",
            """
            WITH moved AS (DELETE FROM \(Self.defaultPartition) WHERE sent_at >= \(from) AND sent_at < \(to) RETURNING *)
            INSERT INTO \(name) SELECT * FROM moved
            """,
            "ALTER TABLE \(Self.table) ATTACH PARTITION \(name) FOR VALUES FROM (\(from)) TO (\(to))",
        ])
    }

    /// Drops `partition` and its rows; whether it was dropped (else its lock was not had in time).
    func drop(_ partition: Partition) async throws(StoreError) -> Bool {
        try await self.underLockTimeout(["DROP TABLE \(partition.name)"])
    }

    /// Runs `statements` in one transaction under ``lockTimeout``; `false` when a lock was not had in time (and
    /// nothing was done).
    func underLockTimeout(_ statements: [String]) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            do {
                try await self.client.withTransaction(logger: self.logger) { connection in
                    try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(Self.lockTimeout)'"), logger: self.logger)
                    for statement in statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                    }
                }
                return true
            } catch let error as PostgresTransactionError where Self.isLockTimeout(error.closureError) {
                self.logger.info("a lock was not had in time: left for the next round", metadata: ["sql": "\(statements.last ?? "")"])
                return false
            }
        }
    }

    private static func isLockTimeout(_ error: (any Error)?) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "55P03"
    }
}
