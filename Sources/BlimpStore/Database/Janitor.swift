import Logging
import ServiceLifecycle

/// Deletes rows past their lifetime once a minute, until shutdown, so that tables stay as small as what is alive, and
/// refreshes rollups: each chore is one statement that returns how many rows it touched.
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
    let logger: Logger
    let interval: Duration

    public init(_ chores: [Chore], logger: Logger, interval: Duration = .seconds(60)) {
        self.chores = chores
        self.logger = logger
        self.interval = interval
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            // Waiting first leaves the schema time to be applied (`blimp dev` migrates after start).
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
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
}
