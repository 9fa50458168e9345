import BlimpCore
import Logging
import NIOPosix
import PostgresNIO

extension DatabaseURL {
    /// Opens and closes one connection, so that a wrong URL or an unreachable server is reported at once and
    /// in plain words (a connection pool would keep retrying in the background).
    public func checkReachable(logger: Logger) async throws(DatabaseError) {
        do {
            let connection = try await self.connect(logger: logger)
            try? await connection.close()
        } catch {
            throw .unreachable(self, reason: DatabaseError.reason(for: error))
        }
    }

    /// One connection of the caller's own, outside any pool, which fails when the server does not accept it within
    /// `timeout` (the URL's `connect_timeout` when `nil`).
    func connect(timeout: Duration? = nil, logger: Logger) async throws -> PostgresConnection {
        var configuration = try self.connectionConfiguration()
        if let timeout { configuration.options.connectTimeout = .milliseconds(timeout.wholeMilliseconds) }
        return try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 0, logger: logger
        ).get()
    }
}

extension DatabaseURL {
    /// Checks the server is reachable, then runs `body` with a connection pool that lives as long as `body` does
    /// (with `statementTimeout` as ``clientConfiguration(statementTimeout:)`` has it). For one-shot commands and tests;
    /// long-running processes put the `PostgresClient` in their `ServiceGroup`.
    public func withClient<T>(
        statementTimeout: Duration? = nil,
        logger: Logger,
        _ body: (PostgresClient) async throws -> T
    ) async throws -> T {
        try await self.checkReachable(logger: logger)
        // The first query may come before `run()` has begun, which the client reports as a warning although it
        // simply waits; connection failures were reported above already.
        var backgroundLogger = logger
        backgroundLogger.logLevel = max(logger.logLevel, .error)
        let client = PostgresClient(configuration: self.clientConfiguration(statementTimeout: statementTimeout), backgroundLogger: backgroundLogger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
