import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The deployment's token buckets in PostgreSQL (`rate_buckets`), one per limit and key, from which every replica
/// takes tokens (see ``SharedRateLimiter``): each take refills the bucket by the time elapsed on the database's clock
/// and grants up to the tokens asked for, in one upsert, so the replicas together never take more than the bucket
/// holds.
///
/// Concurrent takes for different keys go together in one statement (see ``Coalescer``); its rows are locked in key
/// order, so two replicas' batches never deadlock.
public struct RateBuckets: Sendable {
    private let takes: Coalescer<Take, Grant>
    private let client: Database
    /// The logger the store's queries, and the limiters taking from it, log to.
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
        self.takes = Coalescer { takes in try await Self.take(takes, client: client, logger: logger) }
    }

    /// Up to `count` tokens asked of the bucket `name`/`key` that refills at `limit`.
    struct Take: Sendable {
        var name: String
        var key: String
        var limit: RateLimit
        var count: Int
    }

    /// What a take got: `granted` tokens (fewer than asked when the bucket ran dry), and the fraction of a token left
    /// in the bucket afterwards (what a refused caller waits on).
    public struct Grant: Sendable, Equatable {
        public var granted: Int
        public var tokensLeft: Double
    }

    /// Takes up to `count` tokens from the bucket `name`/`key`, which refills at `limit` (a bucket not yet stored
    /// starts full).
    public func take(_ count: Int, name: String, key: String, limit: RateLimit) async throws(StoreError) -> Grant {
        try await StoreError.mapping(Take(name: name, key: key, limit: limit, count: count), to: self.takes)
    }

    /// Deletes the buckets that have refilled (taking from one again starts it full, as before), in batches
    /// (``BatchedDelete``) until none is left or `budget` has passed; returns how many. Rows a take holds are skipped.
    public func deleteRefilled(budget: Duration = .seconds(10)) async throws(StoreError) -> Int {
        try await BatchedDelete.run(over: [()], budget: budget) { _, limit in
            try await BatchedDelete.count(
                """
                WITH gone AS (
                    DELETE FROM rate_buckets WHERE (name, key) IN (
                        SELECT name, key FROM rate_buckets
                        WHERE tokens + extract(epoch FROM now() - refilled_at) * per_second >= burst
                        LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                    RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                on: self.client, logger: self.logger)
        }
    }

    /// What a take returns of its bucket, each column by name.
    enum Column: String, SelectedColumn {
        case name, key, granted, tokensLeft = "tokens_left"

        var expression: String {
            switch self {
            case .granted: "last_grant"
            case .tokensLeft: "tokens"
            default: self.rawValue
            }
        }
    }

    /// Takes the tokens of each bucket in one upsert: a bucket's tokens are refilled by the seconds since it was last
    /// refilled (never backwards: a take that started earlier may commit later), capped at its burst, and as many of
    /// the tokens asked for as are whole are granted.
    private static func take(_ takes: [Take], client: Database, logger: Logger) async throws -> [Grant] {
        let refilled = "least(EXCLUDED.burst, b.tokens + greatest(0, extract(epoch FROM now() - b.refilled_at)) * EXCLUDED.per_second)"
        let rows = try await client.query(
            """
            INSERT INTO rate_buckets AS b (name, key, per_second, burst, tokens, refilled_at, last_grant)
            SELECT name, key, per_second, burst, burst - least(wanted, floor(burst)), now(), least(wanted, floor(burst))::integer
            FROM unnest(\(takes.map(\.name))::text[], \(takes.map(\.key))::text[], \(takes.map(\.limit.perSecond))::float8[],
                        \(takes.map(\.limit.burst))::float8[], \(takes.map(\.count))::integer[]) AS t(name, key, per_second, burst, wanted)
            ORDER BY name, key
            ON CONFLICT (name, key) DO UPDATE SET
                per_second = EXCLUDED.per_second, burst = EXCLUDED.burst,
                last_grant = least(EXCLUDED.last_grant, floor(\(unescaped: refilled)))::integer,
                tokens = \(unescaped: refilled) - least(EXCLUDED.last_grant, floor(\(unescaped: refilled))),
                refilled_at = greatest(b.refilled_at, now())
            RETURNING \(unescaped: Column.selectList)
            """,
            logger: logger
        ).collect()
        var grants: [String: Grant] = [:]
        for row in rows {
            let named = NamedRow<Column>(row)
            let name: String = try named.decode(.name)
            let key: String = try named.decode(.key)
            grants[name + "\u{0}" + key] = Grant(granted: try named.decode(.granted), tokensLeft: try named.decode(.tokensLeft))
        }
        return try takes.map { take in
            guard let grant = grants[take.name + "\u{0}" + take.key] else { throw StoreError.database(reason: "a rate bucket was not returned") }
            return grant
        }
    }
}
