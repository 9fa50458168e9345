import BlimpCore
import Logging
import Metrics
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The PostgreSQL a process works with: a connection pool to the server of the URL's that `target_session_attrs`
/// asks for (the primary, by default), found again when that server stops answering or turns read-only, as in a
/// failover. Stores query it as they would a `PostgresClient`, with the same methods.
///
/// postgres-nio's `PostgresClient` connects to one host, has no hook when it opens a connection and cannot be told to
/// drop one, so no single client can follow a failover. A database keeps one client at a time, to one server, and
/// watches that server on a connection of its own (``watch()``): when it finds it gone or read-only, or a request
/// was refused as read-only (SQLSTATE 25006), it looks for the server to work with in the URL's order and gives the
/// requests a new client to it. The old client is closed after the store's deadline, so that the requests it had in
/// flight may finish, or at once when its server went away (what waited on it is then given up).
public final class Database: Service, Sendable {
    /// How often the watch asks the current server whether it is still the one to work with.
    public static let interval: Duration = .milliseconds(500)
    /// How long the watch waits for a connection or an answer before leaving the question for the next round.
    static let patience: Duration = .seconds(2)

    /// One client to one server; a newer generation replaces it.
    struct Pool: Sendable {
        let client: PostgresClient
        let endpoint: DatabaseURL.Endpoint
        let generation: Int
        /// The store operations waiting on the client.
        let inFlight = InFlightOperations()
        /// Says, once a newer pool replaces this one, how long requests may still use it.
        let retired: AsyncStream<Duration>
        let retire: AsyncStream<Duration>.Continuation
    }

    struct State {
        var pool: Pool
        /// Whether the watch finds no server to work with.
        var down = false
        /// The generation whose requests a server refused as read-only, for the watch to replace.
        var refusedAsReadOnly: Int?
    }

    let url: DatabaseURL
    let name: String
    let logger: Logger
    private let makeConfiguration: @Sendable (DatabaseURL.Endpoint) -> PostgresClient.Configuration
    let state: Mutex<State>
    private let pools: AsyncStream<Pool>
    let opened: AsyncStream<Pool>.Continuation
    /// `blimp_database_up{pool}`: 1 while the server answers as the one to work with, 0 while the watch finds none.
    private let up: Gauge
    /// `blimp_database_switches_total{pool}`: how often requests were given a new client, to another server or to the
    /// same name that DNS moved.
    private let switches: Counter

    /// A database on `url`'s servers, starting with `endpoint` (the first of the URL's by default), its connections
    /// counted in the metrics as `pool`. `statementTimeout` and `maximumConnections` apply to each connection of the
    /// pool (``DatabaseURL/clientConfiguration(for:statementTimeout:)``). The database works once ``run()`` runs.
    public init(
        url: DatabaseURL, pool name: String, statementTimeout: Duration? = nil, maximumConnections: Int? = nil,
        startingAt endpoint: DatabaseURL.Endpoint? = nil, logger: Logger
    ) {
        self.url = url
        self.name = name
        var logger = logger
        logger[metadataKey: "pool"] = "\(name)"
        self.logger = logger
        self.makeConfiguration = { endpoint in
            var configuration = url.clientConfiguration(for: endpoint, statementTimeout: statementTimeout)
            if let maximumConnections { configuration.options.maximumConnections = maximumConnections }
            return configuration
        }
        (self.pools, self.opened) = AsyncStream.makeStream()
        let first = Self.pool(to: endpoint ?? url.endpoints[0], generation: 0, configuration: self.makeConfiguration, name: name, logger: logger)
        self.state = Mutex(State(pool: first))
        self.opened.yield(first)
        self.up = Gauge(label: "blimp_database_up", dimensions: [("pool", name)])
        self.switches = Counter(label: "blimp_database_switches_total", dimensions: [("pool", name)])
        self.switches.increment(by: 0)
    }

    /// A database on `url`'s servers, starting with the first that fits, or with the first of the URL when none does
    /// yet (the watch goes on looking), so that no request goes to a standby listed first while the watch's first
    /// round is under way. A process waits at most the URL's `connect_timeout` for each host that does not answer.
    public static func connecting(
        to url: DatabaseURL, pool name: String, statementTimeout: Duration? = nil, maximumConnections: Int? = nil, logger: Logger
    ) async -> Database {
        let endpoint = try? await url.checkReachable(logger: logger)
        return Database(
            url: url, pool: name, statementTimeout: statementTimeout, maximumConnections: maximumConnections, startingAt: endpoint,
            logger: logger)
    }

    private static func pool(
        to endpoint: DatabaseURL.Endpoint, generation: Int, configuration: (DatabaseURL.Endpoint) -> PostgresClient.Configuration,
        name: String, logger: Logger
    ) -> Pool {
        let configuration = configuration(endpoint)
        var backgroundLogger = logger
        backgroundLogger.handler = ClientBackgroundLog(
            pool: name, maximum: configuration.options.maximumConnections, forwardingTo: logger.handler)
        let client = PostgresClient(configuration: configuration, backgroundLogger: backgroundLogger)
        let (retired, retire) = AsyncStream<Duration>.makeStream()
        return Pool(client: client, endpoint: endpoint, generation: generation, retired: retired, retire: retire)
    }

    /// Whether the watch finds no server to work with: the requests of an API are refused at once meanwhile.
    public var isDown: Bool { self.state.withLock { $0.down } }

    /// The server requests go to.
    public var server: DatabaseURL.Endpoint { self.current.endpoint }

    var current: Pool { self.state.withLock { $0.pool } }

    /// Runs the current client, each that replaces it (until the requests of the one before are done), and the watch.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.watch() }
            for await pool in self.pools {
                group.addTask { await self.serve(pool) }
            }
        }
    }

    /// Runs `pool`'s client until the process stops or, once replaced, for as long as requests may still use it.
    private func serve(_ pool: Pool) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await pool.client.run() }
            group.addTask {
                for await grace in pool.retired {
                    try? await Task.sleep(for: grace)
                    return
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Gives the requests a client to `endpoint`, replacing `old` unless another replaced it already. The old client
    /// closes after the store's deadline: the requests it has in flight may finish meanwhile.
    func replace(_ old: Pool, with endpoint: DatabaseURL.Endpoint) {
        guard self.install(endpoint, replacing: old, grace: StoreError.deadline) else { return }
        self.switches.increment()
        self.logger.notice("database: requests go to \(endpoint) now", metadata: ["previous": "\(old.endpoint)"])
    }

    /// Closes `old`'s client at once, with a new one to the same server in its place, and gives up the store operations
    /// waiting on it: requests waiting for a connection to a server that went away, or for an answer on one
    /// (``InFlightOperations``), fail now (a 503) instead of at their deadline.
    func dropConnections(of old: Pool) {
        guard self.install(old.endpoint, replacing: old, grace: .zero) else { return }
        old.inFlight.abandonAll()
        self.logger.info("database: connections to a server that went away dropped", metadata: ["server": "\(old.endpoint)"])
    }

    /// Makes a client to `endpoint` the current one unless `old` was replaced already, and has `old`'s close after
    /// `grace`; whether it did.
    private func install(_ endpoint: DatabaseURL.Endpoint, replacing old: Pool, grace: Duration) -> Bool {
        let installed: Bool = self.state.withLock { state in
            guard state.pool.generation == old.generation else { return false }
            state.pool = Self.pool(
                to: endpoint, generation: old.generation + 1, configuration: self.makeConfiguration, name: self.name, logger: self.logger)
            state.refusedAsReadOnly = nil
            self.opened.yield(state.pool)
            return true
        }
        if installed { old.retire.yield(grace) }
        return installed
    }

    /// Records whether a server to work with answers, logging the change.
    func record(down: Bool) {
        self.up.record(down ? 0 : 1)
        let was = self.state.withLock { state in
            defer { state.down = down }
            return state.down
        }
        guard was != down else { return }
        if down {
            self.logger.warning("database down: no server answers as the one to work with; requests are refused until one does")
        } else {
            self.logger.notice("database answers again", metadata: ["server": "\(self.server)"])
        }
    }

    /// Notes an error of `pool`'s requests: a server that refused a write as read-only is replaced by the watch.
    private func notice(_ error: any Error, from pool: Pool) {
        guard Self.isReadOnlyRefusal(error) else { return }
        self.state.withLock { $0.refusedAsReadOnly = pool.generation }
    }

    private static func isReadOnlyRefusal(_ error: any Error) -> Bool {
        switch error {
        case let error as PSQLError: error.serverInfo?[.sqlState] == "25006"
        case let error as PostgresTransactionError:
            [error.closureError, error.beginError, error.commitError].contains { $0.map(Self.isReadOnlyRefusal) ?? false }
        default: false
        }
    }
}

extension Database {
    /// Runs `query` on a connection of the current server's pool, as `PostgresClient.query` does.
    @discardableResult
    public func query(_ query: PostgresQuery, logger: Logger? = nil, file: String = #fileID, line: Int = #line) async throws -> PostgresRowSequence {
        try await self.onCurrentPool { try await $0.query(query, logger: logger, file: file, line: line) }
    }

    /// Runs a prepared statement on a connection of the current server's pool, as `PostgresClient.execute` does.
    public func execute<Statement: PostgresPreparedStatement, Row>(
        _ statement: Statement, logger: Logger? = nil, file: String = #fileID, line: Int = #line
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Row> where Row == Statement.Row {
        try await self.onCurrentPool { try await $0.execute(statement, logger: logger, file: file, line: line) }
    }

    /// Lends `closure` a connection of the current server's pool, as `PostgresClient.withConnection` does.
    public func withConnection<Result>(
        isolation: isolated (any Actor)? = #isolation, _ closure: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await self.onCurrentPool(isolation: isolation) { try await $0.withConnection(isolation: isolation, closure) }
    }

    /// Runs `closure` in a transaction on a connection of the current server's pool, as `PostgresClient.withTransaction`
    /// does.
    public func withTransaction<Result>(
        logger: Logger, file: String = #file, line: Int = #line, isolation: isolated (any Actor)? = #isolation,
        _ closure: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await self.onCurrentPool(isolation: isolation) {
            try await $0.withTransaction(logger: logger, file: file, line: line, isolation: isolation, closure)
        }
    }

    /// Runs `body` with the current server's client, as one of its operations in flight (given up if the server goes
    /// away), noting a refusal as read-only for the watch.
    private func onCurrentPool<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: (PostgresClient) async throws -> sending Result
    ) async throws -> sending Result {
        let pool = self.current
        do {
            return try await pool.inFlight.tracking(isolation: isolation) { try await body(pool.client) }
        } catch {
            self.notice(error, from: pool)
            throw error
        }
    }
}
