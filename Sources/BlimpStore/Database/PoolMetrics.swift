import Logging
import Metrics

/// `blimp_db_connections{pool}`, a `PostgresClient`'s connections open or being opened, and
/// `blimp_db_connections_max{pool}`, how many it may open: the pool is used up when the first reaches the second (it
/// opens connections as requests need them and closes those idle for a minute).
///
/// postgres-nio 1.33 reports its pool's events only as messages on the client's background logger ("Creating new
/// connection", "Connection creation failed", "Connection closed", at debug and info), so this log handler reads
/// them, and passes on to the process's handler what reaches its level.
struct PoolMetrics: LogHandler {
    private var handler: any LogHandler
    private let open: Meter

    init(pool: String, maximum: Int, forwardingTo handler: any LogHandler) {
        self.handler = handler
        self.open = Meter(label: "blimp_db_connections", dimensions: [("pool", pool)])
        Gauge(label: "blimp_db_connections_max", dimensions: [("pool", pool)]).record(maximum)
    }

    func log(event: LogEvent) {
        switch event.message.description {
        case "Creating new connection": self.open.increment()
        case "Connection creation failed", "Connection closed": self.open.decrement()
        default: break
        }
        if event.level >= self.handler.logLevel { self.handler.log(event: event) }
    }

    /// Debug at most, so that the pool's events reach this handler whatever the process's level.
    var logLevel: Logger.Level {
        get { min(self.handler.logLevel, .debug) }
        set { self.handler.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { self.handler.metadata }
        set { self.handler.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.handler[metadataKey: key] }
        set { self.handler[metadataKey: key] = newValue }
    }
}

extension Logger {
    /// This logger, also counting the connections of the `PostgresClient` it is the background logger of, as `pool`
    /// with at most `maximum`; itself when no metrics backend is set up.
    public func countingPoolConnections(as pool: String, maximum: Int) -> Logger {
        guard !(MetricsSystem.factory is NOOPMetricsHandler) else { return self }
        var logger = self
        logger.handler = PoolMetrics(pool: pool, maximum: maximum, forwardingTo: self.handler)
        return logger
    }
}
