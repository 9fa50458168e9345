/// Runs `operation`, cancelling it and throwing ``TimeoutError`` if it takes longer than `duration`; returns only once
/// the operation has ended, so nothing it uses outlives the call. For operations that honour cancellation (a request's
/// handler); one that may never return, whatever happens, needs ``withAbandoningTimeout(_:_:)``.
public func withCancellingTimeout<T: Sendable>(
    _ duration: Duration,
    operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask(operation: operation)
        group.addTask {
            try await Task.sleep(for: duration)
            throw TimeoutError(duration: duration)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
