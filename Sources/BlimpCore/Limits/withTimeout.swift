/// The error thrown when ``withTimeout(_:operation:)`` runs out of time.
public struct TimeoutError: Error, CustomStringConvertible {
    public let duration: Duration

    public init(duration: Duration) {
        self.duration = duration
    }

    public var description: String { "timed out after \(self.duration)" }
}

/// Runs `operation`, cancelling it and throwing ``TimeoutError`` if it takes longer than `duration`.
public func withTimeout<T: Sendable>(
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
