import Synchronization

/// The event streams open on this api process, per app: at most ``perApp`` at once, so that one app's readers cannot
/// load the database with their reads without bound.
final class StreamSlots: Sendable {
    /// Streams an app may have open on one api process.
    static let perApp = 16

    /// A stream's hold on its app's slot.
    struct Slot: Sendable {
        let appID: Int64
    }

    private let open = Mutex<[Int64: Int]>([:])

    init() {}

    /// A slot of `appID`'s, or `nil` when all are taken.
    func take(appID: Int64) -> Slot? {
        self.open.withLock { open in
            guard open[appID, default: 0] < Self.perApp else { return nil }
            open[appID, default: 0] += 1
            return Slot(appID: appID)
        }
    }

    func release(_ slot: Slot) {
        self.open.withLock { open in
            open[slot.appID, default: 1] -= 1
            if open[slot.appID] == 0 { open[slot.appID] = nil }
        }
    }
}
