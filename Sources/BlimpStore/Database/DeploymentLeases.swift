import Foundation
import Logging
import PostgresNIO

/// Named leases that let one process of the deployment do what must be done once (`deployment_leases`): a holder
/// keeps its lease by renewing it before it expires, by the database's clock; once it lapses, anyone may take it.
/// Plain rows, so that they work through a connection pooler in transaction mode, as session advisory locks do not.
public struct DeploymentLeases: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Takes or renews the lease `name` for `holder` until `duration` from now; whether `holder` has it.
    public func hold(_ name: String, holder: String, for duration: Duration) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await self.client.query(
                """
                INSERT INTO deployment_leases AS l (name, holder, expires_at)
                VALUES (\(name), \(holder), now() + make_interval(secs => \(duration.seconds)))
                ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
                WHERE l.holder = EXCLUDED.holder OR l.expires_at < now()
                RETURNING 1
                """,
                logger: self.logger
            ).decode(Int.self).array().count == 1
        }
    }

    /// Gives the lease up, if `holder` has it, so that another process need not wait for it to lapse.
    public func release(_ name: String, holder: String) async throws(StoreError) {
        try await StoreError.mapping {
            _ = try await self.client.query("DELETE FROM deployment_leases WHERE name = \(name) AND holder = \(holder)", logger: self.logger)
        }
    }
}
