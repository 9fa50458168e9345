import Foundation
import Logging
import ServiceLifecycle

/// Deletes rows past their lifetime once a minute, until shutdown, so that tables stay as small as what is alive, and
/// refreshes rollups: each chore returns how many rows (or partitions) it touched, and does a bounded amount of work
/// (one statement, or batches within a budget, as the outcome trim). With `leases`, only the
/// process holding the `janitor` lease does the round, so that api replicas do not all repeat it.
public struct Janitor: Service {
    /// One kind of expired row and the delete that removes it (or a rollup and its refresh).
    public struct Chore: Sendable {
        let what: String
        /// What the log says was done to the rows: `deleted`, `refreshed`.
        let verb: String
        let delete: @Sendable () async throws -> Int

        public init(_ what: String, verb: String = "deleted", _ delete: @escaping @Sendable () async throws -> Int) {
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

    public init(_ chores: [Chore], leases: DeploymentLeases? = nil, logger: Logger, interval: Duration = .seconds(60)) {
        self.chores = chores
        self.leases = leases
        self.logger = logger
        self.interval = interval
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            // Waiting first leaves the schema time to be applied (`blimp dev` migrates after start).
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            guard await self.mayRun() else { continue }
            for chore in self.chores {
                guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
                do {
                    let deleted = try await chore.delete()
                    if deleted > 0 { self.logger.info("\(chore.what) \(chore.verb)", metadata: ["count": "\(deleted)"]) }
                } catch {
                    self.logger.warning("\(chore.what) not \(chore.verb)", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Whether this process does the round: it holds the lease for two rounds, renewed each round, so a holder that
    /// stops is replaced within two minutes.
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
