import Foundation
import Synchronization

/// A clock a test sets by hand, for code that takes `now: @Sendable () -> Date`.
public final class TestClock: Sendable {
    private let date: Mutex<Date>

    public init(_ date: Date) { self.date = Mutex(date) }

    public var now: Date { self.date.withLock { $0 } }

    public func set(_ date: Date) { self.date.withLock { $0 = date } }

    public func advance(by seconds: TimeInterval) { self.date.withLock { $0.addTimeInterval(seconds) } }
}
