import BlimpCore
import Logging
import PostgresNIO

/// What the server sessions behind a transaction pooler start with. Blimp cannot set `jit` and the API's
/// `statement_timeout` through such a pooler (startup parameters reach no server session there, and a `SET` would stay
/// on whichever session ran it), so they must be the role's defaults; ``corrections(for:statementTimeout:)`` names the
/// `ALTER ROLE` statements that make them so.
public struct PooledSessionSettings: Sendable, Equatable {
    /// Whether JIT compilation is on.
    public var jit: Bool
    /// `statement_timeout`; `.zero` when statements may run for ever.
    public var statementTimeout: Duration

    public init(jit: Bool, statementTimeout: Duration) {
        self.jit = jit
        self.statementTimeout = statementTimeout
    }

    /// Reads them from one of the pooler's sessions: every session of the role in the database starts alike.
    public static func read(from client: Database, logger: Logger) async throws(StoreError) -> Self {
        try await StoreError.mapping {
            let rows = try await client.query(
                "SELECT current_setting('jit')::boolean, setting::bigint FROM pg_settings WHERE name = 'statement_timeout'",
                logger: logger)
            let (jit, milliseconds) = try await rows.decode((Bool, Int64).self).array()[0]
            return Self(jit: jit, statementTimeout: .milliseconds(milliseconds))
        }
    }

    /// The statements that give `url`'s role, in its database, what Blimp sends a direct connection: JIT off and, with
    /// `statementTimeout`, no statement running longer. None when the settings already do.
    public func corrections(for url: DatabaseURL, statementTimeout: Duration?) -> [String] {
        let role = "ALTER ROLE \(Self.quoted(url.username)) IN DATABASE \(Self.quoted(url.database)) SET"
        var corrections: [String] = []
        if self.jit { corrections.append("\(role) jit = off") }
        if let statementTimeout, self.statementTimeout == .zero || self.statementTimeout > statementTimeout {
            let milliseconds = statementTimeout.wholeMilliseconds
            let value = milliseconds % 1000 == 0 ? "\(milliseconds / 1000)s" : "\(milliseconds)ms"
            corrections.append("\(role) statement_timeout = '\(value)'")
        }
        return corrections
    }

    /// `name` as an SQL identifier.
    private static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
