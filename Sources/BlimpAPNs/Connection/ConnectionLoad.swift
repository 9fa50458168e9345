import Synchronization

/// What the pool needs to know about a connection, readable from any thread: requests taken and not yet answered,
/// its current stream limit, and whether the connection still takes new requests.
final class ConnectionLoad: Sendable {
    /// Requests on a stream or waiting for one.
    let inFlight = Atomic<Int>(0)
    /// The server's `SETTINGS_MAX_CONCURRENT_STREAMS` (APNs starts at 1 and raises it after a valid provider token),
    /// capped by ``APNsClientConfiguration/maxStreamsPerConnection``.
    let streamLimit = Atomic<Int>(1)
    /// Set on GOAWAY or connection loss.
    let isClosing = Atomic<Bool>(false)

    /// Whether another request fits under the stream limit.
    var hasCapacity: Bool {
        self.inFlight.load(ordering: .relaxed) < self.streamLimit.load(ordering: .relaxed)
    }
}
