import Synchronization

/// The event streams open on this api process, per app: at most ``perApp`` at once, so that one app's readers cannot
/// load the database with their reads without bound.
final class StreamSlots: Sendable {
    /// Streams an app may have open on one api process.
    static let perApp = 16

    /// A stream's hold on one of its app's slots, given back when the hold is released: after the stream ends, or with
    /// its response if the response is dropped unsent (the client gone before it began).
    final class Slot: Sendable {
        private let appID: Int64
        private let slots: StreamSlots

        fileprivate init(appID: Int64, slots: StreamSlots) {
            self.appID = appID
            self.slots = slots
        }

        deinit { self.slots.release(appID: self.appID) }
    }

    private let open = Mutex<[Int64: Int]>([:])

    init() {}

    /// A slot of `appID`'s, or `nil` when all are taken.
    func take(appID: Int64) -> Slot? {
        let taken = self.open.withLock { open in
            guard open[appID, default: 0] < Self.perApp else { return false }
            open[appID, default: 0] += 1
            return true
        }
        return taken ? Slot(appID: appID, slots: self) : nil
    }

    private func release(appID: Int64) {
        self.open.withLock { open in
            open[appID, default: 1] -= 1
            if open[appID] == 0 { open[appID] = nil }
        }
    }
}
