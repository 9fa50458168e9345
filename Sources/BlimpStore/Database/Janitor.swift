import Foundation
import Logging
import ServiceLifecycle

/// Deletes rows past their lifetime or retention every ``interval``, until shutdown, so that tables stay as small as
/// what is alive and kept, and refreshes rollups. Each round has a time ``budget`` well under the interval: a chore
/// gets what the chores before it left (its deletes run in bounded batches, ``BatchedDelete``, and stop when it is
/// spent; what is left waits for the next round). Each chore's rows and seconds are logged. With `leases`, only the
/// process holding the `janitor` lease does the round, so that api replicas do not all repeat it.
public struct Janitor: Service {
    /// One kind of expired row and the delete that removes it (or a rollup and its refresh), given the time left in
    /// the round.
    public struct Chore: Sendable {
        let what: String
        /// What the log says was done to the rows: `deleted`, `refreshed`.
        let verb: String
        let delete: @Sendable (_ budget: Duration) async throws -> Int

        public init(_ what: String, verb: String = "deleted", _ delete: @escaping @Sendable (_ budget: Duration) async throws -> Int) {
            self.what = what
            self.verb = verb
            self.delete = delete
        }
    }

    let chores: [Chore]
    let leases: DeploymentLeases?
    let holder = UUID().uuidString
    let logger: Logger
    let interval: Duration
    let budget: Duration

    /// `budget`: the time one round may spend, a third of `interval` unless given.
    public init(_ chores: [Chore], leases: DeploymentLeases? = nil, logger: Logger, interval: Duration = .seconds(60), budget: Duration? = nil) {
        self.chores = chores
        self.leases = leases
        self.logger = logger
        self.interval = interval
        self.budget = budget ?? interval / 3
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            // Waiting first leaves the schema time to be applied (`blimp dev` migrates after start).
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            guard await self.mayRun() else { continue }
            await self.round()
        }
    }

    /// One round: every chore in order, each given the budget's remainder.
    func round() async {
        let started = ContinuousClock.now
        for chore in self.chores {
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            let choreStarted = ContinuousClock.now
            do {
                let count = try await chore.delete(self.budget - (choreStarted - started))
                let seconds = ContinuousClock.now - choreStarted
                // Work done, or time spent, is worth a line; a round of nothing is not.
                self.logger.log(
                    level: count > 0 || seconds >= .seconds(1) ? .info : .debug, "\(chore.what) \(chore.verb)",
                    metadata: ["count": "\(count)", "seconds": "\(Self.seconds(seconds))"])
            } catch {
                self.logger.warning("\(chore.what) not \(chore.verb)", metadata: ["error": "\(error)"])
            }
        }
        let spent = ContinuousClock.now - started
        self.logger.info(
            "the janitor's round ended",
            metadata: ["seconds": "\(Self.seconds(spent))", "budget": "\(Self.seconds(self.budget))"])
        if spent > self.budget {
            self.logger.warning(
                "the janitor's round outran its budget", metadata: ["seconds": "\(Self.seconds(spent))", "budget": "\(Self.seconds(self.budget))"])
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.3f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// Whether this process does the round: it holds the lease for two rounds, renewed each round, so a holder that
    /// stops is replaced within two intervals.
    private func mayRun() async -> Bool {
        guard let leases = self.leases else { return true }
        do {
            return try await leases.hold("janitor", holder: self.holder, for: self.interval * 2)
        } catch {
            self.logger.warning("the janitor's lease could not be taken", metadata: ["error": "\(error)"])
            return false
        }
    }
}
