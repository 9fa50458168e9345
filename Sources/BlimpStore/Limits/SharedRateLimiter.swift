import BlimpCore
import Logging
import Synchronization

/// A rate limit that holds for the whole deployment, however many replicas serve it: every key's tokens come from one
/// bucket in PostgreSQL (``RateBuckets``). A replica takes a small chunk of tokens at a time (``chunk``: a tenth of a
/// second's worth, at least 1) and spends it locally, so most requests cost no round-trip; concurrent requests for a
/// key wait on one take. Tokens left unspent lapse after ``leaseLife``, so the deployment admits at most the limit and
/// falls short of it by at most the chunks its replicas hold unspent. A refusal is remembered until the bucket will
/// have a token again (the `Retry-After`), as nothing but time refills it.
///
/// When PostgreSQL fails a take (or takes longer than ``takeDeadline``), the replica limits alone with a local
/// ``RateLimiter``, and logs it once: requests are neither failed nor all let through. Meanwhile a request every
/// ``fallbackPeriod`` also probes PostgreSQL in the background (no request waits on it), and once one answers, the
/// limit holds for the deployment again.
public final class SharedRateLimiter: Sendable {
    /// The bucket's name in `rate_buckets` (one per limit, e.g. `push`).
    public let name: String
    /// The rate and burst the deployment is held to, per key.
    public let limit: RateLimit
    /// How many tokens a replica takes at a time.
    public let chunk: Int
    /// How long tokens taken but not spent stay spendable.
    static let leaseLife: Duration = .seconds(1)
    /// How long a take may wait on PostgreSQL before the replica limits alone: as long as a coalesced flush may take
    /// (``Coalescer/flushDeadline``). A busy database answers late, and limiting alone then would let each replica
    /// admit a burst of its own; one that cannot be reached fails the take at once.
    static var takeDeadline: Duration { Coalescer<RateBuckets.Take, RateBuckets.Grant>.flushDeadline }
    /// How long the replica waits, while limiting alone, between probes of PostgreSQL.
    static let fallbackPeriod: Duration = .seconds(5)
    /// Keys longer than this are cut to it (the column holds 600 bytes).
    static let maximumKeyLength = 512
    /// Keys held in memory at most: past it, keys with nothing held are forgotten.
    static let maximumKeys = 100_000

    private let buckets: RateBuckets
    private let fallback: RateLimiter<String>
    private let logger: Logger
    private let state = Mutex(State())

    private typealias Waiter = CheckedContinuation<Duration?, Never>

    /// A key's tokens held by this replica, and what it knows of its bucket.
    private struct Lease {
        var tokens = 0
        var lapsesAt = ContinuousClock.Instant.now
        /// Until when the bucket has no token (a refusal's `Retry-After`).
        var refusedUntil: ContinuousClock.Instant?
        /// The requests waiting on a take in flight; `nil` when none is.
        var waiters: [Waiter]?

        func isIdle(at now: ContinuousClock.Instant) -> Bool {
            self.waiters == nil && (self.tokens == 0 || self.lapsesAt <= now) && (self.refusedUntil.map { $0 <= now } ?? true)
        }
    }

    private struct State {
        var leases: [String: Lease] = [:]
        /// Whether the replica limits alone: PostgreSQL failed a take, and no take has succeeded since.
        var alone = false
        /// While alone: whether a probe is in flight, and when the next may start.
        var probing = false
        var probeAfter = ContinuousClock.Instant.now
    }

    /// What an admission does next: answer, answer alone (and probe PostgreSQL in the background), wait on the take in
    /// flight, or start one.
    private enum Step {
        case answer(Duration?), alone(probes: Bool), wait, take
    }

    /// The limit `limit` on the buckets named `name`, taken from `buckets`.
    public init(_ name: String, limit: RateLimit, buckets: RateBuckets) {
        self.name = name
        self.limit = limit
        self.chunk = max(1, min(Int(limit.burst), Int(limit.perSecond / 10)))
        self.buckets = buckets
        self.fallback = RateLimiter(limit)
        self.logger = buckets.logger
    }

    /// Spends one token of `key`: `nil` when there was one, else how long until its bucket will have one.
    public func admit(_ key: String) async -> Duration? {
        guard !self.limit.isUnlimited else { return nil }
        let key = key.utf8.count > Self.maximumKeyLength ? String(decoding: key.utf8.prefix(Self.maximumKeyLength), as: UTF8.self) : key
        return await withCheckedContinuation { (waiter: Waiter) in
            switch self.step(key, waiter) {
            case .answer(let wait): waiter.resume(returning: wait)
            case .alone(let probes):
                waiter.resume(returning: self.fallback.admit(key))
                if probes { Task { await self.probe(key) } }
            case .wait: break
            case .take: Task { await self.take(key) }
            }
        }
    }

    /// Spends a held token, answers from a remembered refusal, or queues `waiter` on a take (starting one when none
    /// is in flight).
    private func step(_ key: String, _ waiter: Waiter) -> Step {
        let now = ContinuousClock.now
        return self.state.withLock { state in
            if state.alone {
                let probes = !state.probing && state.probeAfter <= now
                if probes { state.probing = true }
                return .alone(probes: probes)
            }
            var lease = state.leases[key] ?? Lease()
            defer { state.leases[key] = lease }
            if lease.tokens > 0, now < lease.lapsesAt {
                lease.tokens -= 1
                return .answer(nil)
            }
            if let until = lease.refusedUntil, now < until { return .answer(now.duration(to: until)) }
            if lease.waiters != nil {
                lease.waiters?.append(waiter)
                return .wait
            }
            if state.leases[key] == nil, state.leases.count >= Self.maximumKeys {
                state.leases = state.leases.filter { !$0.value.isIdle(at: now) }
            }
            lease = Lease(waiters: [waiter])
            return .take
        }
    }

    /// Takes tokens for the key's waiters until each is answered: a take asks for a chunk, or for as many as wait.
    private func take(_ key: String) async {
        var taking = true
        while taking {
            let wanted = max(self.chunk, self.state.withLock { $0.leases[key]?.waiters?.count ?? 0 })
            let sent = ContinuousClock.now
            let grant: RateBuckets.Grant?
            do {
                grant = try await withAbandoningTimeout(Self.takeDeadline) { [buckets, name, limit] in
                    try await buckets.take(wanted, name: name, key: key, limit: limit)
                }
            } catch {
                grant = nil
                self.logAlone(error)
            }
            let settled = self.state.withLock { state in self.settle(key, wanted: wanted, grant: grant, sent: sent, in: &state) }
            if grant != nil, settled.wasAlone { self.logShared() }
            for (waiter, wait) in settled.answers { waiter.resume(returning: grant == nil ? self.fallback.admit(key) : wait) }
            taking = settled.takesAgain
        }
    }

    /// Hands the grant's tokens to the key's waiters in order; what they leave is held for ``leaseLife``. When the
    /// bucket ran dry, the rest are refused until it will have a token, counted from when the take was `sent`: the
    /// bucket was read after that, and counted from the answer, a slow one would leave the replica refusing while the
    /// bucket refills, and the deployment short of its limit. When it did not run dry, they wait for the next take
    /// (`takesAgain`). Without a grant (PostgreSQL failed), every waiter is answered by the local limiter. Returns the
    /// answers, and whether the replica was limiting alone until now.
    private func settle(
        _ key: String, wanted: Int, grant: RateBuckets.Grant?, sent: ContinuousClock.Instant, in state: inout State
    ) -> (answers: [(Waiter, Duration?)], takesAgain: Bool, wasAlone: Bool) {
        let now = ContinuousClock.now
        let wasAlone = state.alone
        guard var lease = state.leases[key], let waiters = lease.waiters else { return ([], false, wasAlone) }
        defer { state.leases[key] = lease }
        guard let grant else {
            (state.alone, state.probeAfter) = (true, now + Self.fallbackPeriod)
            lease.waiters = nil
            return (waiters.map { ($0, nil) }, false, wasAlone)
        }
        state.alone = false
        let served = min(grant.granted, waiters.count)
        var answers = waiters.prefix(served).map { ($0, Duration?.none) }
        let rest = Array(waiters.dropFirst(served))
        if rest.isEmpty {
            (lease.tokens, lease.lapsesAt, lease.waiters) = (grant.granted - served, now + Self.leaseLife, nil)
        } else if grant.granted >= wanted {
            lease.waiters = rest
            return (answers, true, wasAlone)
        } else {
            let refill = Duration.milliseconds(max(1, Int64(((1 - grant.tokensLeft) / self.limit.perSecond * 1000).rounded(.up))))
            let wait = max(.milliseconds(1), now.duration(to: sent + refill))
            (lease.refusedUntil, lease.waiters) = (now + wait, nil)
            answers += rest.map { ($0, wait) }
        }
        return (answers, false, wasAlone)
    }

    /// While the replica limits alone, takes a token of `key` to learn whether PostgreSQL answers again (the request
    /// that started the probe was answered alone, so the token goes unspent); no sooner than ``fallbackPeriod`` after
    /// the last failure.
    private func probe(_ key: String) async {
        let answered: Bool
        do {
            _ = try await withAbandoningTimeout(Self.takeDeadline) { [buckets, name, limit] in
                try await buckets.take(1, name: name, key: key, limit: limit)
            }
            answered = true
        } catch {
            answered = false
        }
        let wasAlone = self.state.withLock { state in
            defer { (state.probing, state.probeAfter) = (false, .now + Self.fallbackPeriod) }
            guard answered else { return false }
            defer { state.alone = false }
            return state.alone
        }
        if wasAlone { self.logShared() }
    }

    private func logShared() {
        self.logger.notice("rate limits hold for the deployment again", metadata: ["limit": "\(self.name)"])
    }

    /// Logs, once until PostgreSQL answers again, that the replica limits alone.
    private func logAlone(_ error: any Error) {
        let first = self.state.withLock { state in
            defer { state.alone = true }
            return !state.alone
        }
        if first {
            self.logger.warning(
                "rate limits cannot be shared through PostgreSQL: this replica limits alone for now",
                metadata: ["limit": "\(self.name)", "error": "\(error)"])
        }
    }
}
