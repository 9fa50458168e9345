import Logging

/// Forwards a client's background log but for the warning postgres-nio gives when a connection is leased before the
/// client's `run()` has begun: a ``Database`` runs every client it makes, so such a lease (a worker's first claim,
/// racing the database's start) only waits a moment.
struct EarlyLeaseFilter: LogHandler {
    private var handler: any LogHandler

    init(forwardingTo handler: any LogHandler) {
        self.handler = handler
    }

    func log(event: LogEvent) {
        guard !event.message.description.hasPrefix("Trying to lease connection from `PostgresClient`, but") else { return }
        self.handler.log(event: event)
    }

    var logLevel: Logger.Level {
        get { self.handler.logLevel }
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
