import Logging
import PostgresNIO

extension PostgresPreparedStatement {
    /// Runs the statement and returns its rows. `prepared`, it is prepared by name once per connection and planned
    /// once, not per call; else it is sent unnamed each time, as through a transaction pooler, where the next
    /// statement may meet a server connection that never saw the preparation.
    func rows(on client: Database, prepared: Bool, logger: Logger) async throws -> [Row] {
        try await client.withConnection { connection in try await self.rows(on: connection, prepared: prepared, logger: logger) }
    }

    /// ``rows(on:prepared:logger:)`` on `connection`, within the caller's transaction.
    func rows(on connection: PostgresConnection, prepared: Bool, logger: Logger) async throws -> [Row] {
        if prepared { return try await connection.execute(self, logger: logger).array() }
        let query = PostgresQuery(unsafeSQL: Self.sql, binds: try self.makeBindings())
        return try await connection.query(query, logger: logger).map { try self.decodeRow($0) }.array()
    }
}

/// A statement whose rows are read by the caller, by name (``NamedRow``), so that an unreadable row is the caller's
/// to handle rather than the end of the statement.
protocol RawRowsStatement: PostgresPreparedStatement where Row == PostgresRow {}

extension RawRowsStatement {
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
