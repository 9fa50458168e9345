@testable import BlimpDispatch
import Synchronization
import Testing

/// ``ClaimLoops``: a wake-up starts one idle loop, and one that finds every loop busy is not lost.
struct ClaimLoopsTests {
    /// A drain that records its calls and, while `held`, waits to be let go.
    final class Drains: Sendable {
        let calls = Atomic<Int>(0)
        let started: AsyncStream<Int>
        private let startedContinuation: AsyncStream<Int>.Continuation
        private let gate = Mutex<[CheckedContinuation<Void, Never>]>([])
        let held = Atomic<Bool>(true)

        init() {
            (self.started, self.startedContinuation) = AsyncStream<Int>.makeStream()
        }

        func drain() async {
            let call = self.calls.add(1, ordering: .relaxed).newValue
            self.startedContinuation.yield(call)
            if self.held.load(ordering: .relaxed) { await withCheckedContinuation { continuation in self.gate.withLock { $0.append(continuation) } } }
        }

        /// Lets `count` held drains finish, once that many wait.
        func release(_ count: Int) async {
            while true {
                let waiting = self.gate.withLock { gate -> [CheckedContinuation<Void, Never>] in
                    guard gate.count >= count else { return [] }
                    defer { gate.removeAll() }
                    return gate
                }
                if !waiting.isEmpty {
                    for continuation in waiting { continuation.resume() }
                    return
                }
                await Task.yield()
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aWakeUpStartsOneIdleLoopAndOneWhileAllAreBusyDrainsAgain() async {
        let loops = ClaimLoops(count: 2)
        let drains = Drains()
        await withTaskGroup { group in
            for loop in 0..<2 { group.addTask { await loops.run(loop) { await drains.drain() } } }
            var started = drains.started.makeAsyncIterator()
            loops.wakeOne()
            #expect(await started.next() == 1)
            loops.wakeOne()
            #expect(await started.next() == 2, "the second loop takes the second wake-up")
            loops.wakeOne()  // Both loops busy: kept for the first that finishes.
            await drains.release(2)
            #expect(await started.next() == 3, "a loop that finishes drains again for the wake-up it missed")
            drains.held.store(false, ordering: .relaxed)
            await drains.release(1)
            loops.wakeOne()
            #expect(await started.next() == 4, "an idle loop takes a later wake-up")
            #expect(drains.calls.load(ordering: .relaxed) == 4)
            group.cancelAll()
        }
    }
}
