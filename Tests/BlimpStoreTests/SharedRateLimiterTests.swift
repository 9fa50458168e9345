import BlimpCore
import BlimpTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import BlimpStore

@Suite(.enabled(if: TestDatabase.isEnabled)) struct SharedRateLimiterTests {
    /// Three replicas' limiters, each with its own buckets client, admit a bucket's burst between them, however many
    /// requests come at once; the refused learn how long until the bucket has a token, and another key has its own.
    @Test func replicasTakeFromOneBucket() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let limit = RateLimit(perSecond: 0.01, burst: 10)
            let replicas = (0..<3).map { _ in SharedRateLimiter("push", limit: limit, buckets: RateBuckets(client: client, logger: TestDatabase.logger)) }
            let answers = await withTaskGroup(of: Duration?.self) { group in
                for index in 0..<150 { group.addTask { await replicas[index % 3].admit("7") } }
                return await group.reduce(into: [Duration?]()) { $0.append($1) }
            }
            #expect(answers.count(where: { $0 == nil }) == 10)
            let waits = answers.compactMap { $0 }
            #expect(waits.count == 140)
            #expect(waits.allSatisfy { $0 > .seconds(50) && $0 <= .seconds(100) }, "\(waits.prefix(3))")
            #expect(await replicas[0].admit("8") == nil)
        }
    }

    /// A replica spends the chunk it took without a round-trip: a fast limit's bucket gives a chunk of a tenth of a
    /// second's worth, and what the replica holds unspent is at most that.
    @Test func aChunkIsATenthOfASecondsWorth() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let buckets = RateBuckets(client: client, logger: TestDatabase.logger)
            let limiter = SharedRateLimiter("push", limit: RateLimit(perSecond: 100), buckets: buckets)
            #expect(limiter.chunk == 10)
            #expect(await limiter.admit("7") == nil)
            let left = try await client.query("SELECT tokens FROM rate_buckets WHERE name = 'push' AND key = '7'", logger: TestDatabase.logger)
                .decode(Double.self).array()
            #expect(left.count == 1 && left[0] >= 190 && left[0] <= 191)
            #expect(SharedRateLimiter("sign_in", limit: RateLimit(perSecond: 0.1, burst: 10), buckets: buckets).chunk == 1)
        }
    }

    /// The janitor deletes the buckets that have refilled, and keeps those still short of tokens.
    @Test func refilledBucketsAreDeleted() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let buckets = RateBuckets(client: client, logger: TestDatabase.logger)
            _ = try await buckets.take(1, name: "fast", key: "1", limit: RateLimit(perSecond: 1000, burst: 1))
            _ = try await buckets.take(1, name: "slow", key: "1", limit: RateLimit(perSecond: 0.001, burst: 1))
            try await Task.sleep(for: .milliseconds(20))
            #expect(try await buckets.deleteRefilled() == 1)
            let names = try await client.query("SELECT name FROM rate_buckets", logger: TestDatabase.logger).decode(String.self).array()
            #expect(names == ["slow"])
        }
    }

    /// With no database, a replica limits alone: it admits its own burst and refuses past it, and never fails; once it
    /// limits alone, no request waits on the database (a probe tries it in the background).
    @Test func withoutTheDatabaseAReplicaLimitsAlone() async throws {
        try await TestDatabase.withUnreachableDatabase { client, quiet in
            let limiter = SharedRateLimiter("push", limit: RateLimit(perSecond: 0.01, burst: 3), buckets: RateBuckets(client: client, logger: quiet))
            var admitted = await limiter.admit("7") == nil ? 1 : 0
            let alone = ContinuousClock.now
            for _ in 0..<4 where await limiter.admit("7") == nil { admitted += 1 }
            #expect(admitted == 3)
            #expect(alone.duration(to: .now) < SharedRateLimiter.takeDeadline / 2)
        }
    }
}
