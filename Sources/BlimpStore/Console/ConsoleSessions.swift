import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// A signed-in console user: an app's master secret (that app), an account (the apps it holds roles in), or the
/// deployment admin (every app).
public struct ConsoleSession: Sendable, Equatable {
    /// The app a master-secret session is scoped to; `nil` for accounts and the deployment admin.
    public let appID: Int64?
    /// The account signed in, with its email; `nil` for the master secret and the admin.
    public let account: (id: Int64, email: String)?
    /// The token every form of the session carries back (CSRF).
    public let csrfToken: String
    public let expiresAt: Date

    public init(appID: Int64?, account: (id: Int64, email: String)?, csrfToken: String, expiresAt: Date) {
        self.appID = appID
        self.account = account
        self.csrfToken = csrfToken
        self.expiresAt = expiresAt
    }

    /// What finding a session selects of it (`s`) and its account (`a`), each column by name.
    enum Column: String, SelectedColumn {
        case appID = "app_id", accountID = "account_id", email, csrfToken = "csrf_token", expiresAt = "expires_at"

        var expression: String {
            switch self {
            case .email: "a.email"
            case .appID, .accountID, .csrfToken, .expiresAt: "s.\(self.rawValue)"
            }
        }
    }

    /// The session in `row`, or the column that cannot be read.
    init(_ row: NamedRow<Column>) throws(UnreadableColumn) {
        let (accountID, email): (Int64?, String?) = (try row.decode(.accountID), try row.decode(.email))
        self.init(
            appID: try row.decode(.appID), account: accountID.flatMap { id in email.map { (id: id, email: $0) } },
            csrfToken: try row.decode(.csrfToken), expiresAt: try row.decode(.expiresAt))
    }

    /// Whether this is the deployment admin's session.
    public var isAdmin: Bool { self.appID == nil && self.account == nil }

    public static func == (lhs: ConsoleSession, rhs: ConsoleSession) -> Bool {
        lhs.appID == rhs.appID && lhs.account?.id == rhs.account?.id && lhs.account?.email == rhs.account?.email
            && lhs.csrfToken == rhs.csrfToken && lhs.expiresAt == rhs.expiresAt
    }
}

/// Who a new console session is for.
public enum ConsoleSignIn: Sendable {
    /// An app's master secret.
    case app(Int64)
    /// A person's account.
    case account(id: Int64, email: String)
    /// The deployment admin, with the digest of the token it signed in with.
    case admin(SecretDigest)
}

/// Console sessions in PostgreSQL, so that any API replica recognises them. The cookie carries a random token; the
/// table keeps only its digest. Each request reads its session here, so deleting the row (a person removed, their role
/// changed: ``AccountStore``) ends it at once everywhere; an admin session names the digest of its admin token, and is
/// refused once `BLIMP_ADMIN_TOKEN` is another.
public struct ConsoleSessions: Sendable {
    let client: Database
    let logger: Logger

    /// How long a session lasts from sign-in.
    public static let lifetime: TimeInterval = 12 * 3600

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Starts a session for `who`; returns the cookie's token and the session.
    public func start(_ who: ConsoleSignIn, now: Date) async throws(StoreError) -> (token: String, session: ConsoleSession) {
        let token = RandomToken.make() + RandomToken.make()
        let (appID, account, adminDigest): (Int64?, (id: Int64, email: String)?, ByteBuffer?) =
            switch who {
            case .app(let id): (id, nil, nil)
            case .account(let id, let email): (nil, (id, email), nil)
            case .admin(let digest): (nil, nil, ByteBuffer(bytes: digest.bytes))
            }
        let session = ConsoleSession(
            appID: appID, account: account, csrfToken: RandomToken.make(), expiresAt: now.addingTimeInterval(Self.lifetime))
        try await StoreError.mapping {
            _ = try await self.client.query(
                """
                INSERT INTO console_sessions (token_sha256, app_id, account_id, admin_token_sha256, csrf_token, created_at, expires_at)
                VALUES (\(Self.digest(token)), \(appID), \(account?.id), \(adminDigest), \(session.csrfToken), \(now), \(session.expiresAt))
                """,
                logger: self.logger)
        }
        return (token, session)
    }

    /// The unexpired session whose cookie carries `token`, if any. An admin session counts only while it signed in
    /// with the token whose digest is `adminToken` (`nil`: admin sign-in is off, and no admin session counts).
    public func find(token: String, now: Date, adminToken: SecretDigest?) async throws(StoreError) -> ConsoleSession? {
        let adminDigest = adminToken.map { ByteBuffer(bytes: $0.bytes) }
        return try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: ConsoleSession.Column.selectList)
                FROM console_sessions s LEFT JOIN accounts a ON a.id = s.account_id
                WHERE s.token_sha256 = \(Self.digest(token)) AND s.expires_at > \(now)
                  AND (s.app_id IS NOT NULL OR s.account_id IS NOT NULL OR s.admin_token_sha256 = \(adminDigest))
                """,
                logger: self.logger)
            for try await row in rows { return try ConsoleSession(NamedRow(row)) }
            return nil
        }
    }

    /// Ends the session whose cookie carries `token` (signing out).
    public func end(token: String) async throws(StoreError) {
        try await StoreError.mapping {
            _ = try await self.client.query("DELETE FROM console_sessions WHERE token_sha256 = \(Self.digest(token))", logger: self.logger)
        }
    }

    /// Deletes expired sessions (a ``Janitor`` chore) in batches (``BatchedDelete``) until `budget` is spent; returns
    /// how many went.
    public func deleteExpired(budget: Duration, batchSize: Int = BatchedDelete.size) async throws(StoreError) -> Int {
        try await BatchedDelete.run(over: [()], size: batchSize, budget: budget) { _, limit in
            try await BatchedDelete.count(
                """
                WITH gone AS (
                    DELETE FROM console_sessions
                    WHERE token_sha256 = ANY(ARRAY(SELECT token_sha256 FROM console_sessions WHERE expires_at < now() LIMIT \(limit)))
                      AND expires_at < now()
                    RETURNING 1)
                SELECT count(*)::int FROM gone
                """,
                on: self.client, logger: self.logger)
        }
    }

    private static func digest(_ token: String) -> ByteBuffer { ByteBuffer(bytes: SecretDigest(of: token).bytes) }
}
