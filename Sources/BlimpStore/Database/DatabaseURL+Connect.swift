import BlimpCore
import Logging
import NIOPosix
import PostgresNIO

extension DatabaseURL {
    /// The first of the URL's servers that answers as `target_session_attrs` asks, each tried with one connection
    /// opened and closed, so that a wrong URL or an unreachable server is reported at once and in plain words (a
    /// connection pool would keep retrying in the background). The error gives each server's reason.
    @discardableResult
    public func checkReachable(logger: Logger) async throws(DatabaseError) -> Endpoint {
        var reasons: [String] = []
        for endpoint in self.endpoints {
            switch await self.check(endpoint, patience: self.connectTimeout, logger: logger) {
            case .success: return endpoint
            case .failure(let reason): reasons.append(self.endpoints.count == 1 ? reason.description : "\(endpoint): \(reason)")
            }
        }
        throw .unreachable(self, reason: reasons.joined(separator: "; "))
    }

    /// Whether `endpoint` answers as `target_session_attrs` asks, on a connection opened for the question (within the
    /// URL's `connect_timeout`, as libpq waits for each host) and closed after; the answer within `patience`.
    func check(_ endpoint: Endpoint, patience: Duration, logger: Logger) async -> Result<Void, Refusal> {
        let connection: PostgresConnection
        do {
            connection = try await self.connect(to: endpoint, logger: logger)
        } catch {
            return .failure(Refusal(DatabaseError.reason(for: error)))
        }
        let result: Result<Void, Refusal>
        do {
            let fits = try await withAbandoningTimeout(patience) { try await self.fits(connection, logger: logger) }
            result = fits ? .success(()) : .failure(Refusal(self.target == .primary ? "it is a standby" : "it is read-only"))
        } catch {
            result = .failure(Refusal(DatabaseError.reason(for: error)))
        }
        try? await connection.close()
        return result
    }

    /// Why a server is not the one to work with, in words.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Whether the server of `connection` is the one `target_session_attrs` asks for: one that takes writes
    /// (`read-write`), one not in recovery (`primary`), or any that answers (`any`), asked as libpq asks.
    func fits(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        switch self.target {
        case .readWrite:
            let rows = try await connection.query("SHOW transaction_read_only", logger: logger).collect()
            return try rows.first?.decode(String.self) == "off"
        case .primary:
            let rows = try await connection.query("SELECT pg_is_in_recovery()", logger: logger).collect()
            return try rows.first?.decode(Bool.self) == false
        case .any:
            _ = try await connection.query("SELECT 1", logger: logger).collect()
            return true
        }
    }

    /// One connection of the caller's own to `endpoint`, outside any pool, which fails when the server does not
    /// accept it within `timeout` (the URL's `connect_timeout` when `nil`).
    func connect(to endpoint: Endpoint, timeout: Duration? = nil, logger: Logger) async throws -> PostgresConnection {
        var configuration = try self.connectionConfiguration(for: endpoint)
        if let timeout { configuration.options.connectTimeout = .milliseconds(timeout.wholeMilliseconds) }
        return try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger
        ).get()
    }
}

extension DatabaseURL {
    /// Finds the server to work with, then runs `body` with a ``Database`` on it that lives as long as `body` does
    /// (with `statementTimeout` as ``clientConfiguration(for:statementTimeout:)`` has it). For one-shot commands and
    /// tests; long-running processes put the database in their `ServiceGroup`.
    public func withDatabase<T>(
        statementTimeout: Duration? = nil,
        logger: Logger,
        _ body: (Database) async throws -> T
    ) async throws -> T {
        let endpoint = try await self.checkReachable(logger: logger)
        // The first query may come before `run()` has begun, which the client reports as a warning although it
        // simply waits; connection failures were reported above already.
        var backgroundLogger = logger
        backgroundLogger.logLevel = max(logger.logLevel, .error)
        let database = Database(url: self, pool: "command", statementTimeout: statementTimeout, startingAt: endpoint, logger: backgroundLogger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await database.run() }
            defer { group.cancelAll() }
            return try await body(database)
        }
    }
}
