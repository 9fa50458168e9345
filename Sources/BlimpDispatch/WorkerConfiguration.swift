import BlimpCore

/// How a worker paces itself.
public struct WorkerConfiguration: Sendable {
    /// Parts of pushes one worker fans out at once (its claim loops). Defaults to 4.
    public var concurrentPushes = 4
    /// How many parts a push's fan-out is split into when its first batch comes back full, for this and other
    /// workers' claim loops to share. Defaults to 8.
    public var fanOutParts = 8
    /// Targets read, sent and recorded together, and per-user pushes claimed together; the checkpoint after each
    /// batch bounds what a crash sends twice. Defaults to 1,000.
    public var batchSize = 1000
    /// How long a claim holds, by the database's clock, before another worker may take the part over. The worker
    /// renews it every third of this while the part is in flight, so only a worker that died or lost the database
    /// loses its parts. Defaults to 30 s.
    public var lease: Duration = .seconds(30)
    /// How often a worker looks for work without being notified (expired leases). Defaults to 5 s.
    public var pollInterval: Duration = .seconds(5)
    /// How often the connection a worker listens on is asked whether its server still answers as a primary, and how
    /// long it may take: a connection left on a server that stopped answering without closing it, or that became a
    /// standby, is replaced. Defaults to 10 s.
    public var listenerHeartbeat: Duration = .seconds(10)
    /// Retries of one token after 429, 5xx or no answer: 5 attempts, from 200 ms doubling to at most 10 s.
    public var delivery = DeliveryPolicy(maxAttempts: 5, baseDelay: .milliseconds(200), maxDelay: .seconds(10))
    /// Attempts at a part whose delivery fails as a whole (the database, the app's key), and the waits between them,
    /// before its push fails.
    public var partRetries = PartRetryPolicy()
    /// Claims of a held push released to a token before it is dropped: each claim that ends without an answer recorded
    /// (the worker died, the database failed) waits for its lease. Defaults to 5.
    public var releaseAttempts = 5

    public init() {}
}
