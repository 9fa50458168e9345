/// The error thrown when an operation outlives its time, under ``withCancellingTimeout(_:operation:)`` or
/// ``withAbandoningTimeout(_:_:)``.
public struct TimeoutError: Error, CustomStringConvertible {
    public let duration: Duration

    public init(duration: Duration) {
        self.duration = duration
    }

    public var description: String { "timed out after \(self.duration)" }
}
