import Synchronization

/// How the simulator behaves at the connection level, settable while it runs (admin endpoint and flags).
public struct ConnectionSettings: Sendable, Codable, Equatable {
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` once a connection has sent a valid provider token; until then it is 1, as
    /// APNs does (docs/references.md#apns-connections). Defaults to `1000`.
    public var maxConcurrentStreams: Int = 1000
    /// Send GOAWAY (reason `Shutdown`) after this many streams on a connection, then close it; `0` never.
    public var goAwayEvery: Int = 0
    /// Drop the connection without GOAWAY when this many streams have arrived, losing those in flight; `0` never.
    public var dropEvery: Int = 0
    /// Added latency per response, in milliseconds. Defaults to `0`.
    public var latencyMilliseconds: Int = 0

    public init() {}
}

/// ``ConnectionSettings`` shared between the admin endpoint and every connection.
public final class SharedConnectionSettings: Sendable {
    private let settings: Mutex<ConnectionSettings>

    public init(_ settings: ConnectionSettings = .init()) {
        self.settings = Mutex(settings)
    }

    public var current: ConnectionSettings {
        get { self.settings.withLock { $0 } }
        set { self.settings.withLock { $0 = newValue } }
    }
}
