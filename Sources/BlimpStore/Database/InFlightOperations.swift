import BlimpCore
import Synchronization

/// The store operations waiting on one client of a ``Database``, each by its ``Abandonment``: when that client's server
/// goes away, they are given up at once rather than at their deadlines (postgres-nio may never complete a query
/// written to a connection the server closed).
final class InFlightOperations: Sendable {
    private struct State {
        var next: UInt64 = 0
        var operations: [UInt64: Abandonment] = [:]
        var abandoned = false
    }

    private let state = Mutex(State())

    /// Runs `body`, given up with the current task's operation if ``abandonAll()`` comes meanwhile (or came before).
    func tracking<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> sending T) async throws -> sending T {
        guard let abandonment = Abandonment.current else { return try await body() }
        let id: UInt64? = self.state.withLock { state in
            guard !state.abandoned else { return nil }
            state.next += 1
            state.operations[state.next] = abandonment
            return state.next
        }
        guard let id else {
            abandonment()
            return try await body()
        }
        defer { _ = self.state.withLock { $0.operations.removeValue(forKey: id) } }
        return try await body()
    }

    /// Gives up every operation under way, and any that starts later.
    func abandonAll() {
        let operations = self.state.withLock { state in
            state.abandoned = true
            defer { state.operations = [:] }
            return Array(state.operations.values)
        }
        for abandon in operations { abandon() }
    }
}
