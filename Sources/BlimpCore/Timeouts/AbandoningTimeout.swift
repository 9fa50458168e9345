import Synchronization

/// Runs `operation` in a task of its own and waits at most `duration` for it: past that, or when the caller is
/// cancelled, the operation is cancelled and the caller goes on at once, throwing ``TimeoutError`` (or
/// `CancellationError`), whether or not the operation ever returns. The operation may outlive the call, so it must own
/// what it uses; one that honours cancellation and borrows from its caller needs
/// ``withCancellingTimeout(_:operation:)``.
///
/// Why the store needs this rather than a task group (``withCancellingTimeout(_:operation:)``): postgres-nio 1.33.2
/// writes a query to its connection with no promise of its own (`PostgresConnection.query`), so a query sent on a
/// connection the server has just closed (a restart, a failover) is dropped and its `await` never returns, cancelled or
/// not. A task group would wait for it forever; here the caller is freed and only the stuck task is left behind.
///
/// Deadlines are checked by one shared watch every tenth of a second, not a timer each: every store operation passes
/// through here, tens of thousands a second. What the operation waits on may give it up sooner through
/// ``Abandonment/current`` (the caller then throws ``Abandoned``).
public func withAbandoningTimeout<T: Sendable>(
    _ duration: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = Outcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            outcome.wait(with: continuation)
            let work = Task {
                do {
                    let value = try await Abandonment.$current.withValue(Abandonment { outcome.finish(.failure(Abandoned())) }) {
                        try await operation()
                    }
                    outcome.finish(.success(value))
                } catch {
                    outcome.finish(.failure(error))
                }
            }
            let deadline = DeadlineWatch.shared.add(ContinuousClock.now + duration) {
                if outcome.finish(.failure(TimeoutError(duration: duration))) { work.cancel() }
            }
            outcome.whenFinished {
                DeadlineWatch.shared.remove(deadline)
                work.cancel()
            }
        }
    } onCancel: {
        outcome.finish(.failure(CancellationError()))
    }
}

/// The first of the operation's result, its deadline and the caller's cancellation, delivered once.
private final class Outcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var finished = false
        var cleanup: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    func wait(with continuation: CheckedContinuation<T, any Error>) {
        let early = self.state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Registers what to undo once an outcome is in (at once if it is in already).
    func whenFinished(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = self.state.withLock { state in
            if state.finished { return true }
            state.cleanup = cleanup
            return false
        }
        if runNow { cleanup() }
    }

    /// Delivers `result` unless an outcome is in already; whether it was the first.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (first, continuation, cleanup) = self.state.withLock { state -> (Bool, CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (false, nil, nil) }
            state.finished = true
            if state.continuation == nil { state.early = result }
            defer { (state.continuation, state.cleanup) = (nil, nil) }
            return (true, state.continuation, state.cleanup)
        }
        continuation?.resume(with: result)
        cleanup?()
        return first
    }
}
