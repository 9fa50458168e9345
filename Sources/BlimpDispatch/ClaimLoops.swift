import ServiceLifecycle
import Synchronization

/// A worker's claim loops, and which of them are idle. A wake-up (a notification, a poll) starts one idle loop, and a
/// loop that claimed something starts another before it delivers: a burst spreads over every loop, while a single push
/// costs one claim, not one per loop racing for it. A wake-up that finds every loop busy is kept, and the first loop
/// to finish drains again instead of going idle, so nothing queued waits for the next poll.
final class ClaimLoops: Sendable {
    private let wakeUps: [AsyncStream<Void>.Continuation]
    private let streams: [AsyncStream<Void>]
    private let state: Mutex<State>

    private struct State {
        var idle: [Int]
        var missed = false
    }

    init(count: Int) {
        let made = (0..<count).map { _ in AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1)) }
        self.streams = made.map(\.stream)
        self.wakeUps = made.map(\.continuation)
        self.state = Mutex(State(idle: Array((0..<count).reversed())))
    }

    var count: Int { self.streams.count }

    /// Starts an idle loop, or, when every loop is busy, has the next to finish drain again.
    func wakeOne() {
        let loop = self.state.withLock { state -> Int? in
            guard let loop = state.idle.popLast() else {
                state.missed = true
                return nil
            }
            return loop
        }
        if let loop { self.wakeUps[loop].yield() }
    }

    /// Runs loop `index` until graceful shutdown: `drain` on each wake-up, again while wake-ups came meanwhile, then
    /// idle. A drain under way when the shutdown comes finishes.
    func run(_ index: Int, _ drain: () async -> Void) async {
        for await _ in self.streams[index].cancelOnGracefulShutdown() {
            repeat { await drain() } while !self.goesIdle(index)
        }
    }

    /// Whether the loop goes idle; `false` when a wake-up found every loop busy since (the loop takes it).
    private func goesIdle(_ index: Int) -> Bool {
        self.state.withLock { state in
            if state.missed {
                state.missed = false
                return false
            }
            state.idle.append(index)
            return true
        }
    }
}
