import BlimpStore
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// Part of every ``Worker``: fires due schedules (``ScheduleStore/fireDue(now:limit:preparation:)``), each
/// occurrence once however many workers run. It looks again when the next schedule is due, and at least every
/// ``longestWait``, so a schedule created for the next second fires within a second of its time.
public struct Scheduler: Sendable {
    let schedules: ScheduleStore
    let preparation: PushPreparationInputs
    let logger: Logger
    let now: @Sendable () -> Date
    /// How many due schedules one transaction fires.
    public var batchSize = 100
    public var longestWait: Duration = .seconds(1)

    public init(database: Database, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.schedules = ScheduleStore(client: database, logger: logger)
        self.preparation = PushPreparationInputs(client: database, logger: logger)
        self.logger = logger
        self.now = now
    }

    /// Fires schedules until the worker shuts down.
    public func run() async {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            var wait = self.longestWait
            do {
                let looked = try await self.schedules.fireDue(now: self.now(), limit: self.batchSize, preparation: self.preparation)
                if looked == self.batchSize { continue }
                if let next = try await self.schedules.nextDue() {
                    // Due now but not taken: another worker holds it; look again shortly.
                    let seconds = max(0.05, next.timeIntervalSince(self.now()))
                    wait = min(wait, .milliseconds(Int64(seconds * 1000)))
                }
            } catch {
                // Stopping: the transaction rolled back and the next worker fires what it held.
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                self.logger.error("firing schedules failed; trying again", metadata: ["error": "\(error)"])
            }
            let pause = wait
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
        }
    }
}
