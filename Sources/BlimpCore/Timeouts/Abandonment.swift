/// How an operation under ``withAbandoningTimeout(_:_:)`` is given up before its deadline, by what it waits on once
/// that is known to be gone (the database server a pool used went away): its caller goes on at once, throwing
/// ``Abandoned``, as it would at the deadline.
public struct Abandonment: Sendable {
    /// The innermost operation under ``withAbandoningTimeout(_:_:)`` of the current task, if any.
    @TaskLocal public static var current: Abandonment?

    private let abandon: @Sendable () -> Void

    init(_ abandon: @escaping @Sendable () -> Void) {
        self.abandon = abandon
    }

    /// Gives the operation up; nothing when it is over already.
    public func callAsFunction() { self.abandon() }
}

/// The error an operation given up through its ``Abandonment`` throws.
public struct Abandoned: Error, CustomStringConvertible {
    public var description: String { "given up: the server it waited on went away" }
}
