import BlimpCore
import Synchronization
import Testing

/// The two timeouts: one cancels its operation and waits for it to end, the other frees its caller whatever the
/// operation does.
@Suite struct TimeoutTests {
    @Test func returnsTheResultInTime() async throws {
        #expect(try await withCancellingTimeout(.seconds(5)) { 42 } == 42)
    }

    @Test func throwsWhenTooSlow() async {
        await #expect(throws: TimeoutError.self) {
            try await withCancellingTimeout(.milliseconds(50)) { try await Task.sleep(for: .seconds(30)) }
        }
    }

    /// A cancelled caller cancels its operation, and gets the operation's own error once it has ended.
    @Test func aCancelledCallerCancelsItsOperation() async throws {
        let waiting = Task { try await withCancellingTimeout(.seconds(60)) { try await Task.sleep(for: .seconds(60)) } }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    /// An operation that never returns and ignores cancellation (as a query written to a closed connection does in
    /// postgres-nio 1.33.2) frees its caller at the deadline, or at once when the caller is cancelled.
    @Test func anOperationThatNeverReturnsIsAbandoned() async throws {
        let start = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            try await withAbandoningTimeout(.milliseconds(100)) { await Self.never() }
        }
        // Without the timeout it would never return; a busy machine has been seen to take 6.7 s (the watch ticks).
        #expect(ContinuousClock.now - start < .seconds(30))

        let waiting = Task { try await withAbandoningTimeout(.seconds(60)) { await Self.never() } }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(try await withAbandoningTimeout(.seconds(5)) { 42 } == 42)
    }

    /// What an operation waits on gives it up through its abandonment (a pool whose server went away): the caller
    /// throws `Abandoned` at once, long before the deadline; an operation over already is not affected.
    @Test func anOperationIsGivenUpByWhatItWaitsOn() async throws {
        let held = AbandonmentBox()
        let waiting = Task { try await withAbandoningTimeout(.seconds(600)) { held.keep(Abandonment.current); await Self.never() } }
        while held.value == nil { try await Task.sleep(for: .milliseconds(10)) }
        held.value?()
        await #expect(throws: Abandoned.self) { try await waiting.value }
        #expect(Abandonment.current == nil)

        let done = AbandonmentBox()
        #expect(try await withAbandoningTimeout(.seconds(5)) { done.keep(Abandonment.current); return 42 } == 42)
        done.value?()
    }

    /// Suspends forever, whatever happens to its task.
    private static func never() async {
        await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
    }
}

/// An abandonment handed out of its operation.
private final class AbandonmentBox: Sendable {
    private let stored = Mutex<Abandonment?>(nil)
    var value: Abandonment? { self.stored.withLock { $0 } }
    func keep(_ abandonment: Abandonment?) { self.stored.withLock { $0 = abandonment } }
}
