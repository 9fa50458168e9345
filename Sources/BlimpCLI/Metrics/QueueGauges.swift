import BlimpStore
import Foundation
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// `blimp_queue_depth` and `blimp_queue_oldest_age_seconds` describe the whole deployment, so one process exports
/// them: the api process that holds the `queue-gauges` lease (``DeploymentLeases``), renewed every 10 s for 30 s. The
/// others export neither; a holder that stops gives the lease up, and one that dies loses it within 30 s.
final class QueueGauges: Service, Sendable {
    static let lease = "queue-gauges"
    let leases: DeploymentLeases
    let dispatch: DispatchStore
    let holder: String
    let logger: Logger
    private let isHolder = Mutex(false)

    init(leases: DeploymentLeases, dispatch: DispatchStore, logger: Logger) {
        self.leases = leases
        self.dispatch = dispatch
        self.holder = "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)/\(UUID().uuidString.prefix(8))"
        self.logger = logger
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            do {
                let held = try await self.leases.hold(Self.lease, holder: self.holder, for: .seconds(30))
                let was = self.isHolder.withLock { was in defer { was = held }; return was }
                if held != was { self.logger.info(held ? "exporting the queue's gauges" : "another process exports the queue's gauges") }
            } catch {
                self.isHolder.withLock { $0 = false }
                self.logger.warning("the queue gauges' lease could not be renewed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(10)) }
        }
        if self.isHolder.withLock({ $0 }) { try? await self.leases.release(Self.lease, holder: self.holder) }
    }

    /// Before a scrape: the queue now, when this process holds the lease; otherwise the gauges are not exported.
    @Sendable func sample() async {
        guard self.isHolder.withLock({ $0 }), let queue = try? await self.dispatch.queue() else {
            Gauge(label: "blimp_queue_depth").destroy()
            Gauge(label: "blimp_queue_oldest_age_seconds").destroy()
            return
        }
        Gauge(label: "blimp_queue_depth").record(queue.depth)
        Gauge(label: "blimp_queue_oldest_age_seconds").record(queue.oldestAcceptedAt.map { max(0, Date().timeIntervalSince($0)) } ?? 0)
    }
}
