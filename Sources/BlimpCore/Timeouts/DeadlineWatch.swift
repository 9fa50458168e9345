import Synchronization

/// The deadlines of the operations under way, and one task that fires those past due every ``tick`` while any are
/// pending.
final class DeadlineWatch: Sendable {
    static let shared = DeadlineWatch()
    static let tick: Duration = .milliseconds(100)

    private struct State {
        var pending: [UInt64: (at: ContinuousClock.Instant, fire: @Sendable () -> Void)] = [:]
        var nextID: UInt64 = 0
        var watching = false
    }

    private let state = Mutex(State())

    /// Calls `fire` once `deadline` has passed, unless removed before; the id to remove it by.
    func add(_ deadline: ContinuousClock.Instant, fire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, starts) = self.state.withLock { state in
            state.nextID += 1
            state.pending[state.nextID] = (deadline, fire)
            defer { state.watching = true }
            return (state.nextID, !state.watching)
        }
        if starts { Task { await self.watch() } }
        return id
    }

    func remove(_ id: UInt64) {
        _ = self.state.withLock { $0.pending.removeValue(forKey: id) }
    }

    /// Fires what is due every tick, until nothing is pending.
    private func watch() async {
        while true {
            try? await Task.sleep(for: Self.tick)
            let now = ContinuousClock.now
            let due = self.state.withLock { state -> [@Sendable () -> Void]? in
                if state.pending.isEmpty {
                    state.watching = false
                    return nil
                }
                let due = state.pending.filter { $0.value.at <= now }
                for id in due.keys { state.pending.removeValue(forKey: id) }
                return due.values.map(\.fire)
            }
            guard let due else { return }
            for fire in due { fire() }
        }
    }
}
