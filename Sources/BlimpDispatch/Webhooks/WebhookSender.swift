import AsyncHTTPClient
import BlimpCore
import BlimpStore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Delivers apps' events to their webhook endpoints (``WebhookStore``): every worker runs one. It claims the endpoints
/// that are due under a lease, and sends each its next batch (fixed at its first attempt, so that a retry is the same
/// request), signed as the Standard Webhooks specification says, at least once and in offset order. A 2xx moves the
/// endpoint on at once, so a backlog drains batch after batch; a 410 disables it; any other answer, or none, is tried
/// again on the retry schedule, until the endpoint has failed for the schedule's `disableAfter`. Each endpoint is sent
/// on its own, with its own deadline: a slow or dead one holds up no push and no other endpoint.
public struct WebhookSender: Service {
    /// How the sender behaves; the defaults are the product's.
    public struct Configuration: Sendable {
        public var retries = WebhookRetrySchedule.standard
        /// Whether endpoints may resolve to private, loopback or link-local addresses (`BLIMP_WEBHOOKS_ALLOW_PRIVATE`).
        public var allowsPrivateAddresses = false
        /// How long an idle sender waits before looking for due endpoints again, and an endpoint with nothing new
        /// before its log is read again.
        public var pollInterval: Duration = .seconds(1)
        /// How long one request may take.
        public var requestTimeout: Duration = .seconds(30)
        /// Endpoints sent to at once.
        public var concurrency = 16

        public init() {}
    }

    let store: WebhookStore
    let events: EventLog
    let clients = WebhookClients()
    let serverKey: ServerKey
    let configuration: Configuration
    let name: String
    let logger: Logger

    /// A sender named `name` (the worker's).
    public init(store: WebhookStore, events: EventLog, serverKey: ServerKey, configuration: Configuration, name: String, logger: Logger) {
        self.store = store
        self.events = events
        self.serverKey = serverKey
        self.configuration = configuration
        self.name = name
        self.logger = logger
    }

    /// What wakes the sender: a delivery that ended (its slot is free), or the poll's tick.
    private enum Wake {
        case delivered, tick
    }

    /// Claims due endpoints while it has free slots (``Configuration/concurrency``), each delivered in a task of its own,
    /// and claims again as each ends or at the poll: a slow endpoint holds one slot, never the others. At shutdown the
    /// deliveries in flight are cancelled, unrecorded: their leases run out and a worker tries them again.
    public func run() async throws {
        await withTaskGroup(of: Wake.self) { group in
            var inFlight = 0
            var ticking = false
            while !Task.isCancelled, !Task.isShuttingDownGracefully {
                if inFlight < self.configuration.concurrency {
                    for endpoint in await self.claim(limit: self.configuration.concurrency - inFlight) {
                        group.addTask {
                            await self.deliver(endpoint)
                            return .delivered
                        }
                        inFlight += 1
                    }
                }
                if !ticking {
                    group.addTask {
                        // Ends at once at shutdown, so that stopping waits for no tick (the worker stops after this).
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.configuration.pollInterval) }
                        return .tick
                    }
                    ticking = true
                }
                switch await group.next() {
                case .delivered?: inFlight -= 1
                case .tick?: ticking = false
                case nil: break
                }
            }
            group.cancelAll()
        }
        await self.clients.shutDown()
    }

    /// Up to `limit` due endpoints, claimed under a lease as long as two requests may take; none when PostgreSQL fails.
    private func claim(limit: Int) async -> [WebhookStore.ClaimedEndpoint] {
        do {
            return try await self.store.claimDue(
                worker: self.name, lease: self.configuration.requestTimeout * 2, limit: limit, serverKey: self.serverKey, now: Date())
        } catch {
            self.logger.warning("claiming webhooks failed", metadata: ["error": "\(error)"])
            return []
        }
    }

    /// Sends the endpoint its next batch, fixing it first when none is pending, and records what came of it.
    func deliver(_ endpoint: WebhookStore.ClaimedEndpoint) async {
        let now = Date()
        do {
            let batch: WebhookStore.Batch
            if let pending = endpoint.batch {
                batch = pending
            } else {
                guard let next = try await self.nextBatch(of: endpoint, now: now) else { return }
                batch = next
                try await self.store.fix(batch, of: endpoint, worker: self.name)
            }
            try await self.send(batch, to: endpoint, now: now)
        } catch where Task.isCancelled {
            // Stopping: the lease runs out, and the batch goes again from another claim.
        } catch {
            self.logger.warning("a webhook's delivery could not be recorded", metadata: ["webhook.id": "\(endpoint.id)", "error": "\(error)"])
        }
    }

    /// The endpoint's next batch from its app's log; `nil` when there is none to send (the endpoint was moved past
    /// events it does not take, left due at the next poll, or disabled because its backlog went past retention).
    private func nextBatch(of endpoint: WebhookStore.ClaimedEndpoint, now: Date) async throws -> WebhookStore.Batch? {
        if let trimmed = try await self.events.trimmed(appID: endpoint.appID), trimmed > endpoint.cursor {
            try await self.store.disable(
                endpoint, reason: "its backlog went past the event retention: events it had not delivered were deleted", status: nil,
                worker: self.name, now: now)
            return nil
        }
        let read = try await self.events.events(appID: endpoint.appID, after: endpoint.cursor, limit: 500)
        let plan = WebhookBatchPlan(from: read, types: endpoint.types)
        guard let through = plan.through else {
            try await self.store.pass(endpoint, to: endpoint.cursor, next: now.addingTimeInterval(self.configuration.pollInterval.seconds), worker: self.name)
            return nil
        }
        guard !plan.events.isEmpty else {
            try await self.store.pass(endpoint, to: through, next: now, worker: self.name)
            return nil
        }
        return WebhookStore.Batch(id: "msg_" + UUID.random().lowercaseString, body: plan.body(at: now), events: plan.events.count, through: through)
    }

    /// Posts the batch, signed, and records the answer.
    private func send(_ batch: WebhookStore.Batch, to endpoint: WebhookStore.ClaimedEndpoint, now: Date) async throws {
        let metadata: Logger.Metadata = ["webhook.id": "\(endpoint.id)", "webhook.batch": "\(batch.id)", "events": "\(batch.events)"]
        let target: EndpointResolution.Checked
        switch await EndpointResolution.check(endpoint.url, allowingPrivate: self.configuration.allowsPrivateAddresses) {
        case .success(let checked): target = checked
        case .failure(let refusal):
            try await self.failed(endpoint, status: nil, error: refusal.reason, retryAfter: nil, now: now, metadata: metadata)
            return
        }
        let timestamp = Int64(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Blimp-Webhooks")
        request.headers.add(name: "webhook-id", value: batch.id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(
            name: "webhook-signature", value: WebhookSignature.header(id: batch.id, timestamp: timestamp, body: batch.body, secrets: endpoint.secrets))
        request.body = .bytes(ByteBuffer(bytes: batch.body))
        let status: Int
        let retryAfter: Duration?
        do {
            (status, retryAfter) = try await self.post(request, to: target)
        } catch {
            if Task.isCancelled { throw CancellationError() }
            try await self.failed(endpoint, status: nil, error: "no answer: \(error)", retryAfter: nil, now: now, metadata: metadata)
            return
        }
        switch status {
        case 200..<300:
            try await self.store.delivered(endpoint, status: status, worker: self.name, now: Date())
            self.logger.debug("webhook delivered", metadata: metadata)
        case 410:
            try await self.store.disable(endpoint, reason: "the endpoint answered 410 Gone", status: status, worker: self.name, now: Date())
        default:
            try await self.failed(endpoint, status: status, error: "answered \(status)", retryAfter: retryAfter, now: now, metadata: metadata)
        }
    }

    /// Posts `request` to `target`'s address: the answer's status and `Retry-After`.
    private func post(_ request: HTTPClientRequest, to target: EndpointResolution.Checked) async throws -> (Int, Duration?) {
        let client = await self.clients.acquire(target)
        do {
            let response = try await client.execute(request, timeout: .seconds(self.configuration.requestTimeout.components.seconds))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            await self.clients.release(target)
            return (Int(response.status.code), response.headers.first(name: "Retry-After").flatMap(Int64.init).map { .seconds($0) })
        } catch {
            await self.clients.release(target)
            throw error
        }
    }

    /// Records a failed attempt, to be tried again on the schedule; or disables the endpoint once it has failed for
    /// the schedule's `disableAfter`.
    private func failed(
        _ endpoint: WebhookStore.ClaimedEndpoint, status: Int?, error: String, retryAfter: Duration?, now: Date, metadata: Logger.Metadata
    ) async throws {
        let since = endpoint.failingSince ?? now
        if now.timeIntervalSince(since) >= self.configuration.retries.disableAfter.seconds {
            try await self.store.disable(
                endpoint, reason: "failing since \(AirshipDate.format(since)) UTC: \(error)", status: status, worker: self.name, now: now)
            return
        }
        let delay = self.configuration.retries.delay(afterFailure: endpoint.attempts + 1, retryAfter: retryAfter)
        try await self.store.failed(
            endpoint, status: status, error: error, next: now.addingTimeInterval(delay.seconds), worker: self.name, now: now)
        self.logger.info("webhook delivery failed; it will be tried again", metadata: metadata.merging(["error": "\(error)"]) { $1 })
    }
}
