import Synchronization

/// A rate and a burst; a rate of 0 means no limit.
public struct RateLimit: Sendable, Equatable {
    public var perSecond: Double
    public var burst: Double

    /// `perSecond` on average, bursts of `burst` (twice the rate, and at least 1, when not given).
    public init(perSecond: Double, burst: Double? = nil) {
        self.perSecond = perSecond
        self.burst = burst ?? max(perSecond * 2, 1)
    }

    public static let unlimited = RateLimit(perSecond: 0)
    public var isUnlimited: Bool { self.perSecond <= 0 }
}

/// Token buckets by key: each key may spend ``RateLimit/perSecond`` a second on average, in bursts of up to
/// ``RateLimit/burst``. A refused call learns how long to wait (an HTTP `Retry-After`).
///
/// Keys that have refilled are dropped once the table holds ``maximumKeys``, so a flood of distinct keys (client
/// addresses) cannot grow it without bound; a key dropped that way was full, so dropping it forgives nothing.
public final class RateLimiter<Key: Hashable & Sendable>: Sendable {
    public let limit: RateLimit
    public let maximumKeys: Int
    private let buckets = Mutex<[Key: Bucket]>([:])

    private struct Bucket {
        var tokens: Double
        var at: ContinuousClock.Instant
    }

    public init(_ limit: RateLimit, maximumKeys: Int = 100_000) {
        self.limit = limit
        self.maximumKeys = maximumKeys
    }

    /// Spends one token of `key`: `nil` when there was one, else how long until there will be.
    public func admit(_ key: Key, now: ContinuousClock.Instant = .now) -> Duration? {
        guard !self.limit.isUnlimited else { return nil }
        return self.buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: self.limit.burst, at: now)
            let elapsed = bucket.at.duration(to: now).seconds
            bucket.tokens = min(self.limit.burst, bucket.tokens + max(elapsed, 0) * self.limit.perSecond)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return .milliseconds(Int64(((1 - bucket.tokens) / self.limit.perSecond * 1000).rounded(.up)))
            }
            bucket.tokens -= 1
            if buckets[key] == nil, buckets.count >= self.maximumKeys { self.dropFull(&buckets, now: now) }
            buckets[key] = bucket
            return nil
        }
    }

    /// Forgets the keys whose buckets have refilled by `now`.
    private func dropFull(_ buckets: inout [Key: Bucket], now: ContinuousClock.Instant) {
        let refill = Duration.milliseconds(Int64(self.limit.burst / self.limit.perSecond * 1000))
        buckets = buckets.filter { $0.value.at.duration(to: now) < refill }
    }
}
