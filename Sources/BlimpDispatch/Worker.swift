import BlimpAPNs
import BlimpCore
import BlimpStore
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Tracing

/// `blimp worker`: turns queued pushes into APNs requests. Any number of workers share one PostgreSQL; each claims
/// parts of pushes with `FOR UPDATE SKIP LOCKED` under a lease, so none is handled by two at once, and one whose
/// worker died is resumed by another from its last checkpoint. A large push is split into parts that every worker's
/// claim loops share. Workers wake on `LISTEN blimp_pushes` (the API notifies it when it queues pushes, a fan-out when
/// it splits one), and also every ``WorkerConfiguration/pollInterval`` for expired leases; ``Listening`` says where
/// they listen.
///
/// Each worker also fires due schedules (``Scheduler``).
///
/// Held pushes that devices' tokens released (``AwaitingToken``) come first: each is a few tokens, sent at once. They
/// are looked for only when a release was notified, on each poll, and after a claim found some: a part's claim costs
/// no extra query when nothing was released.
///
/// On SIGTERM a worker stops claiming, lets the batches in flight finish and be recorded, and gives their parts
/// back for another worker to resume. The APNs client is the caller's to shut down.
public final class Worker: Service, Sendable {
    /// Where a worker hears that pushes were queued, besides its poll.
    public enum Listening: Sendable {
        /// `LISTEN` on the worker's database client.
        case onDatabase
        /// `LISTEN` on this client, a direct connection, where the database client goes through a transaction pooler
        /// (which would hand the session's notifications to no one).
        case on(Database)
        /// None: the poll alone finds new pushes.
        case off
    }

    let database: Database
    /// Where the worker LISTENs; `nil`: nowhere.
    let listener: Database?
    let store: DispatchStore
    let apps: AppStore
    public let apns: APNsClient
    /// Publishes to live activity channels and deletes those an end went through; `nil`: a push through one fails.
    let broadcast: (any APNsBroadcastChannels & APNsBroadcastPublishing)?
    let liveActivityChannels: LiveActivityChannelStore
    /// Fires due schedules into the queue.
    let scheduler: Scheduler
    let serverKey: ServerKey
    let configuration: WorkerConfiguration
    /// The worker's name in logs and leases (its webhooks' sender claims under it too).
    public let name: String
    let logger: Logger
    let now: @Sendable () -> Date
    private let profiles = Mutex<[Int64: (FanOut.DeliveryTarget, fetchedAt: Date)]>([:])
    /// Whether released held pushes may be waiting: set by a release's notification, each poll and a claim that found
    /// some; cleared by the claim loop that goes to look.
    private let releasesMayWait = Atomic<Bool>(true)
    /// The claim loops (``WorkerConfiguration/concurrentPushes``) and which are idle.
    private let loops: ClaimLoops

    public init(
        database: Database,
        listening: Listening = .onDatabase,
        apns: APNsClient,
        broadcast: (any APNsBroadcastChannels & APNsBroadcastPublishing)? = nil,
        serverKey: ServerKey,
        configuration: WorkerConfiguration = WorkerConfiguration(),
        name: String? = nil,
        preparedStatements: Bool = true,
        logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.database = database
        self.listener =
            switch listening {
            case .onDatabase: database
            case .on(let client): client
            case .off: nil
            }
        self.store = DispatchStore(client: database, logger: logger, preparedStatements: preparedStatements)
        self.apps = AppStore(client: database, logger: logger)
        self.apns = apns
        self.broadcast = broadcast
        self.liveActivityChannels = LiveActivityChannelStore(client: database, logger: logger)
        self.scheduler = Scheduler(database: database, logger: logger, now: now)
        self.serverKey = serverKey
        self.configuration = configuration
        self.loops = ClaimLoops(count: configuration.concurrentPushes)
        self.name = name ?? "worker-\(UUID.random().lowercaseString.prefix(8))"
        self.logger = logger
        self.now = now
    }

    public func run() async throws {
        await withDiscardingTaskGroup { group in
            if let listener = self.listener { group.addTask { await self.listen(on: listener) } }
            group.addTask { await self.scheduler.run() }
            group.addTask {
                while !Task.isShuttingDownGracefully, !Task.isCancelled {
                    self.releasesMayWait.store(true, ordering: .relaxed)
                    self.loops.wakeOne()
                    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.configuration.pollInterval) }
                }
            }
            // Each claim loop has its own wake-ups, so a loop busy with a long fan-out holds up none of the others.
            for loop in 0..<self.loops.count {
                group.addTask { await self.loops.run(loop) { await self.drain() } }
            }
        }
    }

    /// Claims and delivers held pushes that tokens released, then parts of pushes, one at a time, or per-user pushes
    /// many at a time (up to ``WorkerConfiguration/batchSize``), until none is ready or the worker shuts down.
    private func drain() async {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                if self.releasesMayWait.exchange(false, ordering: .relaxed) {
                    let released = try await self.store.claimReleased(
                        worker: self.name, limit: self.configuration.batchSize, lease: self.configuration.lease)
                    if !released.isEmpty {
                        self.releasesMayWait.store(true, ordering: .relaxed)
                        self.loops.wakeOne()
                        for push in released { await self.deliver(push) }
                        continue
                    }
                }
                let claimed = try await self.store.claim(
                    worker: self.name, now: self.now(), lease: self.configuration.lease, limit: self.configuration.batchSize)
                guard !claimed.isEmpty else { return }
                self.loops.wakeOne()  // More may be ready: another loop claims while this one delivers.
                let perUser = claimed.filter(\.isPerUser)
                if !perUser.isEmpty { await self.deliver(perUser: perUser) }
                for push in claimed where !push.isPerUser { await self.deliver(push) }
            } catch {
                if !Task.isCancelled { self.logger.error("claiming failed", metadata: ["error": "\(error)"]) }
                return
            }
        }
    }

    /// Fans the part out with its lease renewed meanwhile. A part that fails as a whole is tried again later, or
    /// fails its push (``DispatchStore/partFailed(appID:pushID:part:reason:permanent:worker:policy:)``).
    ///
    /// Traced as a span that continues the trace of the request that queued the push, when it was traced.
    private func deliver(_ push: ClaimedPush) async {
        await withSpan("deliver push part", context: TraceParent.context(continuing: push.traceParent), ofKind: .consumer) { span in
            span.attributes["blimp.push.id"] = push.pushID.lowercaseString
            span.attributes["blimp.push.part"] = Int(push.part)
            await self.deliver(push, span: span)
        }
    }

    private func deliver(_ push: ClaimedPush, span: any Span) async {
        var metadata: Logger.Metadata = ["push.id": "\(push.pushID.lowercaseString)", "part": "\(push.part)", "worker": "\(self.name)"]
        do {
            let delivery = try await self.profile(of: push.appID)
            metadata["app.key"] = "\(delivery.appKey)"
            span.attributes["blimp.app.key"] = delivery.appKey
            self.logger.debug("part claimed", metadata: metadata)
            let fanOut = self.fanOut(delivering: delivery)
            let ending = try await self.renewingLease(of: [push]) { try await fanOut.run(push) }
            if case .abandoned = ending { try await self.store.release(push, worker: self.name) }
            self.logger.debug("part \(ending)", metadata: metadata)
        } catch is LeaseLost {
            self.logger.debug("part left to the worker that took it over", metadata: metadata)
        } catch where Task.isCancelled {
            // Stopped, not failed: the lease runs out and another worker resumes the part from its checkpoint.
            self.logger.debug("part left to its lease", metadata: metadata)
        } catch {
            span.recordError(error)
            await self.failed(push, DispatchFailure(error), metadata: metadata)
        }
    }

    /// Sends per-user pushes of one app together (``FanOut/run(perUser:)``), their leases renewed meanwhile; one with
    /// more targets than a batch takes goes on in a fan-out of its own. When the batch fails as a whole, so does each
    /// push's part.
    private func deliver(perUser pushes: [ClaimedPush]) async {
        guard let appID = pushes.first?.appID else { return }
        var metadata: Logger.Metadata = ["pushes": "\(pushes.count)", "worker": "\(self.name)"]
        await withSpan("deliver per-user pushes", ofKind: .consumer) { span in
            span.attributes["blimp.pushes"] = pushes.count
            do {
                let delivery = try await self.profile(of: appID)
                metadata["app.key"] = "\(delivery.appKey)"
                span.attributes["blimp.app.key"] = delivery.appKey
                let fanOut = self.fanOut(delivering: delivery)
                let overflowing = try await self.renewingLease(of: pushes) { try await fanOut.run(perUser: pushes) }
                self.logger.debug("per-user pushes sent", metadata: metadata)
                for push in overflowing { await self.deliver(push) }
            } catch is LeaseLost {
                self.logger.debug("per-user pushes left to the worker that took one over", metadata: metadata)
            } catch where Task.isCancelled {
                self.logger.debug("per-user pushes left to their lease", metadata: metadata)
            } catch {
                span.recordError(error)
                for push in pushes {
                    metadata["push.id"] = "\(push.pushID.lowercaseString)"
                    await self.failed(push, DispatchFailure(error), metadata: metadata)
                }
            }
        }
    }

    /// Records that the part failed as a whole: it is tried again later, or fails its push
    /// (``DispatchStore/partFailed(appID:pushID:part:reason:permanent:worker:policy:)``).
    private func failed(_ push: ClaimedPush, _ failure: DispatchFailure, metadata: Logger.Metadata) async {
        var metadata = metadata
        metadata["error"] = "\(failure.reason)"
        do {
            let state = try await self.store.partFailed(
                appID: push.appID, pushID: push.pushID, part: push.part, reason: failure.reason, permanent: failure.isPermanent,
                worker: self.name, policy: self.configuration.partRetries)
            self.logger.error(state == .failed ? "push failed" : "part failed; it will be tried again", metadata: metadata)
        } catch {
            // The database is gone too: the lease runs out and another attempt takes the part up.
            metadata["record.error"] = "\(error)"
            self.logger.error("part failed and could not be recorded", metadata: metadata)
        }
    }

    /// Sends a held push to the tokens that released it. One that fails is claimed again once its lease runs out,
    /// up to ``WorkerConfiguration/releaseAttempts`` times, then dropped.
    private func deliver(_ released: DispatchStore.ReleasedPush) async {
        let metadata: Logger.Metadata = [
            "push.id": "\(released.push.pushID.lowercaseString)", "tokens": "\(released.targets.count)", "worker": "\(self.name)",
        ]
        do {
            guard released.attempts <= self.configuration.releaseAttempts else {
                try await self.store.dropReleased(released)
                self.logger.error("held push dropped: its release failed every attempt", metadata: metadata)
                return
            }
            try await self.fanOut(delivering: try await self.profile(of: released.push.appID)).run(released)
            self.logger.debug("held push sent", metadata: metadata)
        } catch {
            self.logger.error("held push not sent; it will be tried again", metadata: metadata.merging(["error": "\(error)"]) { $1 })
        }
    }

    /// A fan-out for the app of `delivery`, through this worker's clients.
    private func fanOut(delivering delivery: FanOut.DeliveryTarget) -> FanOut {
        FanOut(
            store: self.store, apns: self.apns, broadcast: self.broadcast, liveActivityChannels: self.liveActivityChannels,
            delivery: delivery, configuration: self.configuration, worker: self.name, logger: self.logger, now: self.now)
    }

    /// Runs `body` while renewing the parts' leases every third of their length, so that an APNs slower than the lease
    /// never lets another worker take a part over and send its batch again. When another worker has taken one over all
    /// the same (this one stalled past its lease), `body` is cancelled, so that only what was in flight goes twice,
    /// and ``LeaseLost`` is thrown.
    private func renewingLease<T: Sendable>(of parts: [ClaimedPush], _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let metadata: Logger.Metadata = [
            "push.id": "\(parts[0].pushID.lowercaseString)", "part": "\(parts[0].part)", "parts": "\(parts.count)", "worker": "\(self.name)",
        ]
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.configuration.lease / 3)
                    if Task.isCancelled { break }
                    switch try? await self.store.renewLeases(of: parts, worker: self.name, lease: self.configuration.lease) {
                    case true?: self.logger.trace("lease renewed", metadata: metadata)
                    case false?:
                        self.logger.warning("lease lost", metadata: metadata)
                        throw LeaseLost()
                    case nil: break  // PostgreSQL did not answer: the next renewal tries again.
                    }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            preconditionFailure("the fan-out's task always returns")
        }
    }

    /// Another worker holds a part this one was sending: what is left of it is that worker's to send.
    struct LeaseLost: Error {}

    /// The app's bundle id, key, environment and budget, read again after a minute.
    private func profile(of appID: Int64) async throws -> FanOut.DeliveryTarget {
        if let cached = self.profiles.withLock({ $0[appID] }), self.now().timeIntervalSince(cached.fetchedAt) < 60 {
            return cached.0
        }
        let (app, key, budget) = try await self.apps.delivery(appID: appID, serverKey: self.serverKey)
        let profile = FanOut.DeliveryTarget(appKey: app.appKey, bundleID: app.bundleID, key: key, environment: app.apnsEnvironment, budget: budget)
        self.profiles.withLock { $0[appID] = (profile, self.now()) }
        return profile
    }

    /// Wakes an idle claim loop whenever the API notifies that it queued pushes or that a token released held ones;
    /// reconnects when the connection drops, or when its heartbeat finds the server silent or a standby.
    private func listen(on listener: Database) async {
        DispatchMetrics.listenerReconnects.increment(by: 0)  // exported at 0 until the first reconnect
        var listened = false
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            if listened { DispatchMetrics.listenerReconnects.increment() }
            listened = true
            do {
                try await listener.withConnection { connection in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            try await connection.listen(on: DispatchStore.channel) { notifications in
                                // Anything queued or released while not listening.
                                self.releasesMayWait.store(true, ordering: .relaxed)
                                self.loops.wakeOne()
                                for try await notification in notifications.cancelOnGracefulShutdown() {
                                    if notification.payload == DispatchStore.releasedPayload { self.releasesMayWait.store(true, ordering: .relaxed) }
                                    self.loops.wakeOne()
                                }
                            }
                        }
                        group.addTask { try await self.heartbeat(on: connection) }
                        defer { group.cancelAll() }
                        try await group.next()
                    }
                }
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                self.logger.warning("listening for pushes failed; retrying", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Asks the listening connection's server, every ``WorkerConfiguration/listenerHeartbeat``, whether it is in
    /// recovery: NOTIFY reaches listeners on the primary only. A server that does not answer within the heartbeat (a
    /// connection left open on one that went away without closing it) or is a standby (demoted in a failover) gets
    /// the connection closed, which ends the listen, and listening starts again on a new one
    /// (https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-RECOVERY-INFO-TABLE).
    private func heartbeat(on connection: PostgresConnection) async throws {
        let interval = self.configuration.listenerHeartbeat
        while true {
            try await Task.sleep(for: interval)
            let standby = try? await withAbandoningTimeout(interval) {
                try await connection.query("SELECT pg_is_in_recovery()", logger: self.logger).collect().first?.decode(Bool.self)
            }
            guard standby == false else {
                self.logger.warning("the listening connection's server did not answer as a primary; listening again", metadata: [
                    "heartbeat": "\(interval)", "answer": "\(standby == true ? "standby" : "none")",
                ])
                try? await connection.close()
                throw ListenerSilent()
            }
        }
    }

    /// The listening connection's server did not answer its heartbeat as a primary.
    struct ListenerSilent: Error {}
}
