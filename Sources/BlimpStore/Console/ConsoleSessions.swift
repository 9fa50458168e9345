import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// A signed-in console user: the app it may see, or every app for the deployment admin.
public struct ConsoleSession: Sendable, Equatable {
    /// The app the session is scoped to; `nil` for the deployment admin.
    public let appID: Int64?
    /// The token every form of the session carries back (CSRF).
    public let csrfToken: String
    public let expiresAt: Date

    public var isAdmin: Bool { self.appID == nil }
}

/// Console sessions in PostgreSQL, so that any API replica recognises them. The cookie carries a random token; the
/// table keeps only its digest.
public struct ConsoleSessions: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// How long a session lasts from sign-in.
    public static let lifetime: TimeInterval = 12 * 3600

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Starts a session for the app (or, with `nil`, for the admin); returns the cookie's token and the session.
    public func start(appID: Int64?, now: Date) async throws(StoreError) -> (token: String, session: ConsoleSession) {
        let token = RandomToken.make() + RandomToken.make()
        let session = ConsoleSession(appID: appID, csrfToken: RandomToken.make(), expiresAt: now.addingTimeInterval(Self.lifetime))
        try await StoreError.mapping {
            _ = try await self.client.query(
                """
                INSERT INTO console_sessions (token_sha256, app_id, csrf_token, created_at, expires_at)
                VALUES (\(Self.digest(token)), \(appID), \(session.csrfToken), \(now), \(session.expiresAt))
                """,
                logger: self.logger)
        }
        return (token, session)
    }

    /// The unexpired session whose cookie carries `token`, if any.
    public func find(token: String, now: Date) async throws(StoreError) -> ConsoleSession? {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT app_id, csrf_token, expires_at FROM console_sessions
                WHERE token_sha256 = \(Self.digest(token)) AND expires_at > \(now)
                """,
                logger: self.logger)
            for try await (appID, csrf, expiresAt) in rows.decode((Int64?, String, Date).self) {
                return ConsoleSession(appID: appID, csrfToken: csrf, expiresAt: expiresAt)
            }
            return nil
        }
    }

    /// Ends the session whose cookie carries `token` (signing out).
    public func end(token: String) async throws(StoreError) {
        try await StoreError.mapping {
            _ = try await self.client.query("DELETE FROM console_sessions WHERE token_sha256 = \(Self.digest(token))", logger: self.logger)
        }
    }

    /// Deletes expired sessions (a ``Janitor`` chore); returns how many went.
    public func deleteExpired() async throws(StoreError) -> Int {
        try await StoreError.mapping {
            try await self.client.query(
                "WITH gone AS (DELETE FROM console_sessions WHERE expires_at < now() RETURNING 1) SELECT count(*)::int FROM gone",
                logger: self.logger
            ).decode(Int.self).array().first ?? 0
        }
    }

    private static func digest(_ token: String) -> ByteBuffer { ByteBuffer(bytes: SecretDigest(of: token).bytes) }
}
