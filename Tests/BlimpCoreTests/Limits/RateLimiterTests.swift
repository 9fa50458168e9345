import BlimpCore
import Testing

@Suite struct RateLimiterTests {
    @Test func aBurstThenTheRateWithTheWaitToldAndKeysApart() {
        let limiter = RateLimiter<Int>(RateLimit(perSecond: 10, burst: 3))
        let start = ContinuousClock.now
        #expect((0..<3).map { _ in limiter.admit(1, now: start) } == [nil, nil, nil])
        #expect(limiter.admit(1, now: start) == .milliseconds(100))
        #expect(limiter.admit(2, now: start) == nil, "another key has its own bucket")
        #expect(limiter.admit(1, now: start.advanced(by: .milliseconds(100))) == nil, "one token back after 100 ms")
        #expect(limiter.admit(1, now: start.advanced(by: .milliseconds(150))) == .milliseconds(50))
        #expect(RateLimiter<Int>(.unlimited).admit(1) == nil)
    }

    /// A flood of distinct keys does not grow the table past its bound: keys whose buckets refilled are dropped.
    @Test func fullBucketsAreDroppedWhenTheTableIsFull() {
        let limiter = RateLimiter<Int>(RateLimit(perSecond: 1, burst: 1), maximumKeys: 10)
        let start = ContinuousClock.now
        for key in 0..<10 { #expect(limiter.admit(key, now: start) == nil) }
        #expect(limiter.admit(0, now: start) != nil, "key 0 spent its token")
        // Two seconds on, every bucket has refilled: a new key makes room by dropping them.
        #expect(limiter.admit(100, now: start.advanced(by: .seconds(2))) == nil)
        #expect(limiter.admit(0, now: start.advanced(by: .seconds(2))) == nil, "a dropped key starts full")
    }
}
