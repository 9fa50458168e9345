import Synchronization

/// What the pool needs to know about a connection, readable from any thread: streams in flight, the server's
/// current stream limit, and whether the connection still takes new requests.
final class ConnectionLoad: Sendable {
    let inFlight = Atomic<Int>(0)
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`: APNs starts at 1 and raises it after a valid provider token.
    let streamLimit = Atomic<Int>(1)
    /// Set on GOAWAY or connection loss.
    let isClosing = Atomic<Bool>(false)

    /// Whether another stream fits under the server's limit.
    var hasCapacity: Bool {
        self.inFlight.load(ordering: .relaxed) < self.streamLimit.load(ordering: .relaxed)
    }
}
