import Logging
import Metrics
import PostgresNIO

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

extension PostgresClient {
    /// A client whose connections count in the metrics as `pool` (``PoolMetrics``), when a metrics backend is set up.
    public convenience init(pool: String, configuration: Configuration, logger: Logger) {
        var backgroundLogger = logger
        if !(MetricsSystem.factory is NOOPMetricsHandler) {
            backgroundLogger.handler = PoolMetrics(
                pool: pool, maximum: configuration.options.maximumConnections, forwardingTo: logger.handler)
        }
        self.init(configuration: configuration, backgroundLogger: backgroundLogger)
    }
}
