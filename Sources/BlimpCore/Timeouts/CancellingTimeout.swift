import Synchronization

/// Runs `operation`, cancelling it and throwing ``TimeoutError`` if it takes longer than `duration`; returns only once
/// the operation has ended, so nothing it uses outlives the call. For operations that honour cancellation (a request's
/// handler); one that may never return, whatever happens, needs ``withAbandoningTimeout(_:_:)``.
///
/// The deadline is kept by the shared watch (checked every tenth of a second), not by a timer of its own: every API
/// request passes through here.
public func withCancellingTimeout<T: Sendable>(
    _ duration: Duration,
    operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let work = Task(operation: operation)
    let expiry = Expiry()
    let deadline = DeadlineWatch.shared.add(ContinuousClock.now + duration) {
        expiry.passed.store(true, ordering: .releasing)
        work.cancel()
    }
    defer { DeadlineWatch.shared.remove(deadline) }
    let result = await withTaskCancellationHandler { await work.result } onCancel: { work.cancel() }
    if case .failure = result, expiry.passed.load(ordering: .acquiring) { throw TimeoutError(duration: duration) }
    return try result.get()
}

/// Whether an operation's deadline has passed.
private final class Expiry: Sendable {
    let passed = Atomic(false)
}
