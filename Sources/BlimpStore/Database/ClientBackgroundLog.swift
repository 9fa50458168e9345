import Logging
import Metrics
import PostgresNIO

/// The background log a ``Database`` gives each `PostgresClient` it makes, passing on to the process's handler what
/// reaches its level, with two changes:
/// - With a metrics backend set up, `blimp_db_connections{pool}`, the client's connections open or being opened, and
///   `blimp_db_connections_max{pool}`, how many it may open: the pool is used up when the first reaches the second (it
///   opens connections as requests need them and closes those idle for a minute). postgres-nio 1.33 reports its
///   pool's events only as messages on this log ("Creating new connection", "Connection creation failed",
///   "Connection closed", at debug and info), so they are read here.
/// - Without postgres-nio's warning for a lease before the client's `run()` has begun: the database runs every client
///   it makes, so such a lease (a worker's first claim, racing the database's start) only waits a moment.
struct ClientBackgroundLog: LogHandler {
    private var handler: any LogHandler
    /// `blimp_db_connections{pool}`; `nil` without a metrics backend.
    private let open: Meter?

    init(pool: String, maximum: Int, forwardingTo handler: any LogHandler) {
        self.handler = handler
        if MetricsSystem.factory is NOOPMetricsHandler {
            self.open = nil
        } else {
            self.open = Meter(label: "blimp_db_connections", dimensions: [("pool", pool)])
            Gauge(label: "blimp_db_connections_max", dimensions: [("pool", pool)]).record(maximum)
        }
    }

    func log(event: LogEvent) {
        let message = event.message.description
        switch message {
        case "Creating new connection": self.open?.increment()
        case "Connection creation failed", "Connection closed": self.open?.decrement()
        case _ where message.hasPrefix("Trying to lease connection from `PostgresClient`, but"): return
        default: break
        }
        if event.level >= self.handler.logLevel { self.handler.log(event: event) }
    }

    /// Debug at most while counting connections, so that the pool's events reach this handler whatever the process's
    /// level.
    var logLevel: Logger.Level {
        get { self.open == nil ? self.handler.logLevel : min(self.handler.logLevel, .debug) }
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
