import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// A person with a console account, as lists show them: one row per app they hold a role in.
public struct AccountListing: Sendable, Equatable {
    public let accountID: Int64
    public let email: String
    /// The app and the role in it; `nil` for a person who holds no role anywhere.
    public let appKey: String?
    public let role: ConsoleRole?
    public let totpEnabled: Bool
    public let createdAt: Date

    /// What a listing selects of an account (`a`), its role (`r`) and the role's app (`apps`), each column by name.
    enum Column: String, SelectedColumn {
        case accountID = "account_id", email, appKey = "app_key", role, totpEnabled = "totp_confirmed", createdAt = "created_at"

        var expression: String {
            switch self {
            case .accountID: "a.id"
            case .appKey: "apps.app_key"
            case .role: "r.role"
            case .email, .totpEnabled, .createdAt: "a.\(self.rawValue)"
            }
        }
    }

    /// The listing in `row`, or the column that cannot be read.
    init(_ row: NamedRow<Column>) throws(UnreadableColumn) {
        self.accountID = try row.decode(.accountID)
        self.email = try row.decode(.email)
        self.appKey = try row.decode(.appKey)
        self.role = try row.decode(.role, as: String?.self).flatMap(ConsoleRole.init(rawValue:))
        self.totpEnabled = try row.decode(.totpEnabled)
        self.createdAt = try row.decode(.createdAt)
    }
}

/// What signing in as an account checks: the stored hash and the TOTP state.
public struct AccountSignIn: Sendable {
    public let accountID: Int64
    public let email: String
    public let passwordHash: PasswordHash?
    /// The confirmed TOTP secret; `nil` when the account has no second factor.
    public let totp: TOTP?
    /// The last TOTP time step accepted.
    public let lastStep: Int64?
}

/// Console accounts and their roles per app (`accounts`, `account_roles`). A change of a person's roles deletes their
/// console sessions in the same transaction, so it takes effect at their next request on every replica. TOTP
/// secrets are sealed under the server key, bound to the email (``SealedSecret/totpSecret(email:)``). Every change is
/// recorded in the audit trail by whoever made it, in the change's transaction.
public struct AccountStore: Sendable {
    let client: Database
    let logger: Logger
    let now: @Sendable () -> Date

    public init(client: Database, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
    }

    /// Gives `email` `role` in the app, creating the account with `passwordHash` when there is none (an existing
    /// account keeps its password). Returns the account's id and whether it was created; a person who already holds a
    /// role in the app is ``StoreError/invalid(_:)``, an unknown app ``StoreError/noSuchApp``.
    public func add(
        email: EmailAddress, appKey: String, role: ConsoleRole, by origin: AuditOrigin, passwordHash: @Sendable () async -> PasswordHash
    ) async throws(StoreError) -> (accountID: Int64, created: Bool) {
        guard let appID = try await self.appID(appKey) else { throw .noSuchApp }
        let existing = try await self.accountID(email)
        let hash = existing == nil ? await passwordHash() : nil
        return try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                var created = false
                var accountID = existing
                if accountID == nil, let hash {
                    let rows = try await connection.query(
                        """
                        INSERT INTO accounts (email, password_hash) VALUES (\(email.value), \(hash.description))
                        ON CONFLICT (email) DO NOTHING RETURNING id
                        """, logger: self.logger)
                    accountID = try await rows.decode(Int64.self).array().first
                    created = accountID != nil
                }
                if accountID == nil { accountID = try await self.accountID(email, on: connection) }  // created meanwhile
                guard let accountID else { throw StoreError.notFound }
                let granted = try await connection.query(
                    """
                    INSERT INTO account_roles (account_id, app_id, role) VALUES (\(accountID), \(appID), \(role.rawValue))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: self.logger
                ).decode(Int.self).array()
                guard !granted.isEmpty else { throw StoreError.invalid("\(email) already has a role in this app") }
                try await self.record(
                    created ? .accountCreated : .accountRoleChanged, email, appID: appID, by: origin, details: Self.role(role), on: connection)
                return (accountID, created)
            }
        }
    }

    /// Every account with its roles, by email then app key; only the app's people with `appKey`.
    public func list(appKey: String? = nil) async throws(StoreError) -> [AccountListing] {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: AccountListing.Column.selectList)
                FROM accounts a
                LEFT JOIN account_roles r ON r.account_id = a.id
                LEFT JOIN apps ON apps.id = r.app_id
                WHERE \(appKey)::text IS NULL OR apps.app_key = \(appKey)
                ORDER BY a.email, apps.app_key
                """, logger: self.logger)
            var listings: [AccountListing] = []
            for try await row in rows { listings.append(try AccountListing(NamedRow(row))) }
            return listings
        }
    }

    /// Removes the person from the app with `appKey`, or, with `nil`, deletes the account; their console sessions
    /// end in the same transaction. `false` when there was no such person (in that app).
    public func remove(email: EmailAddress, appKey: String? = nil, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let removed: [(Int64, Int64?)]
                if let appKey {
                    removed = try await connection.query(
                        """
                        DELETE FROM account_roles r USING accounts a, apps
                        WHERE r.account_id = a.id AND r.app_id = apps.id AND a.email = \(email.value) AND apps.app_key = \(appKey)
                        RETURNING r.account_id, r.app_id
                        """, logger: self.logger
                    ).decode((Int64, Int64?).self).array()
                } else {
                    removed = try await connection.query(
                        "DELETE FROM accounts WHERE email = \(email.value) RETURNING id, NULL::bigint", logger: self.logger
                    ).decode((Int64, Int64?).self).array()
                }
                for (id, appID) in removed {
                    try await Self.endSessions(of: id, on: connection, logger: self.logger)
                    try await self.record(.accountRemoved, email, appID: appID, by: origin, on: connection)
                }
                return !removed.isEmpty
            }
        }
    }

    /// Changes the person's role in the app and ends their console sessions; `false` when they hold none there.
    public func setRole(email: EmailAddress, appKey: String, role: ConsoleRole, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let changed = try await connection.query(
                    """
                    UPDATE account_roles r SET role = \(role.rawValue) FROM accounts a, apps
                    WHERE r.account_id = a.id AND r.app_id = apps.id AND a.email = \(email.value) AND apps.app_key = \(appKey)
                    RETURNING r.account_id, r.app_id
                    """, logger: self.logger
                ).decode((Int64, Int64).self).array()
                for (id, appID) in changed {
                    try await Self.endSessions(of: id, on: connection, logger: self.logger)
                    try await self.record(.accountRoleChanged, email, appID: appID, by: origin, details: Self.role(role), on: connection)
                }
                return !changed.isEmpty
            }
        }
    }

    /// The person's role in the app; `nil` when they hold none.
    public func role(accountID: Int64, appID: Int64) async throws(StoreError) -> ConsoleRole? {
        try await StoreError.mapping {
            let roles = try await self.client.query(
                "SELECT role FROM account_roles WHERE account_id = \(accountID) AND app_id = \(appID)", logger: self.logger
            ).decode(String.self).array()
            return roles.first.flatMap(ConsoleRole.init(rawValue:))
        }
    }

    /// The apps the person holds a role in, with the role.
    public func roles(accountID: Int64) async throws(StoreError) -> [Int64: ConsoleRole] {
        try await StoreError.mapping {
            var roles: [Int64: ConsoleRole] = [:]
            let rows = try await self.client.query(
                "SELECT app_id, role FROM account_roles WHERE account_id = \(accountID)", logger: self.logger)
            for try await (appID, role) in rows.decode((Int64, String).self) { roles[appID] = ConsoleRole(rawValue: role) }
            return roles
        }
    }

    /// What signing in as `email` checks, the TOTP secret unsealed with `serverKey`; `nil` for an unknown email.
    public func signIn(email: EmailAddress, serverKey: ServerKey) async throws(StoreError) -> AccountSignIn? {
        let row = try await StoreError.mapping {
            try await self.client.query(
                """
                SELECT id, password_hash, CASE WHEN totp_confirmed THEN totp_secret_sealed END, totp_last_step
                FROM accounts WHERE email = \(email.value)
                """, logger: self.logger
            ).decode((Int64, String, Data?, Int64?).self).array().first
        }
        guard let (id, hash, sealed, lastStep) = row else { return nil }
        let totp = try sealed.map { sealed throws(StoreError) in try Self.unseal(sealed, email: email, serverKey: serverKey) }
        return AccountSignIn(accountID: id, email: email.value, passwordHash: PasswordHash(stored: hash), totp: totp, lastStep: lastStep)
    }

    /// Records `step` as the last TOTP step accepted for the account, atomically: `false` when it is not after the
    /// last one (a replayed code, on this replica or another).
    public func acceptTOTPStep(accountID: Int64, step: Int64) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await !self.client.query(
                """
                UPDATE accounts SET totp_last_step = \(step)
                WHERE id = \(accountID) AND (totp_last_step IS NULL OR totp_last_step < \(step)) RETURNING 1
                """, logger: self.logger
            ).decode(Int.self).array().isEmpty
        }
    }

    /// Replaces the account's password hash: a change of password, recorded as made by `origin`, or, with `nil`, a
    /// stronger hash of the same password at sign-in.
    public func setPassword(accountID: Int64, email: EmailAddress, _ hash: PasswordHash, by origin: AuditOrigin?) async throws(StoreError) {
        try await self.changing(accountID, email, .accountPasswordChanged, by: origin) { connection in
            try await connection.query(
                "UPDATE accounts SET password_hash = \(hash.description) WHERE id = \(accountID) RETURNING 1", logger: self.logger)
        }
    }

    /// Stores a new, unconfirmed TOTP secret for the account (sign-in asks for no code until it is confirmed).
    public func enrollTOTP(
        accountID: Int64, email: EmailAddress, _ totp: TOTP, serverKey: ServerKey, by origin: AuditOrigin
    ) async throws(StoreError) {
        let sealed = serverKey.seal(Data(totp.secret), boundTo: SealedSecret.totpSecret(email: email.value).context)
        try await self.changing(accountID, email, .accountTOTPChanged, by: origin, details: Self.totp("pending")) { connection in
            try await connection.query(
                """
                UPDATE accounts SET totp_secret_sealed = \(ByteBuffer(bytes: sealed)), totp_confirmed = false, totp_last_step = NULL
                WHERE id = \(accountID) RETURNING 1
                """, logger: self.logger)
        }
    }

    /// The account's TOTP secret waiting for confirmation, if any.
    public func pendingTOTP(accountID: Int64, email: EmailAddress, serverKey: ServerKey) async throws(StoreError) -> TOTP? {
        let sealed = try await StoreError.mapping {
            try await self.client.query(
                "SELECT totp_secret_sealed FROM accounts WHERE id = \(accountID) AND NOT totp_confirmed", logger: self.logger
            ).decode(Data?.self).array().first ?? nil
        }
        return try sealed.map { sealed throws(StoreError) in try Self.unseal(sealed, email: email, serverKey: serverKey) }
    }

    /// Turns the pending TOTP secret on, `step` (the code the person typed) recorded as used; `false` when nothing
    /// was pending.
    public func confirmTOTP(accountID: Int64, email: EmailAddress, step: Int64, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        try await self.changing(accountID, email, .accountTOTPChanged, by: origin, details: Self.totp("on")) { connection in
            try await connection.query(
                """
                UPDATE accounts SET totp_confirmed = true, totp_last_step = \(step)
                WHERE id = \(accountID) AND totp_secret_sealed IS NOT NULL AND NOT totp_confirmed RETURNING 1
                """, logger: self.logger)
        }
    }

    /// Turns the account's second factor off.
    public func disableTOTP(accountID: Int64, email: EmailAddress, by origin: AuditOrigin) async throws(StoreError) {
        try await self.changing(accountID, email, .accountTOTPChanged, by: origin, details: Self.totp("off")) { connection in
            try await connection.query(
                "UPDATE accounts SET totp_secret_sealed = NULL, totp_confirmed = false, totp_last_step = NULL WHERE id = \(accountID) RETURNING 1",
                logger: self.logger)
        }
    }

    /// Runs `update` (a statement returning a row per account changed) and, when it changed the account, records
    /// `action` by `origin` (if any), in one transaction; whether it changed it.
    @discardableResult
    private func changing(
        _ accountID: Int64, _ email: EmailAddress, _ action: AuditAction, by origin: AuditOrigin?, details: RawJSON? = nil,
        _ update: @escaping @Sendable (PostgresConnection) async throws -> PostgresRowSequence
    ) async throws(StoreError) -> Bool {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                var changed = false
                for try await _ in try await update(connection) { changed = true }
                if changed, let origin { try await self.record(action, email, appID: nil, by: origin, details: details, on: connection) }
                return changed
            }
        }
    }

    private func record(
        _ action: AuditAction, _ email: EmailAddress, appID: Int64?, by origin: AuditOrigin, details: RawJSON? = nil,
        on connection: PostgresConnection
    ) async throws {
        let entry = AuditEntry(
            appID: appID, actor: origin.actor, address: origin.address, action: action, subject: email.value, details: details)
        try await AuditLog.record([entry], at: self.now(), on: connection, logger: self.logger)
    }

    private static func role(_ role: ConsoleRole) -> RawJSON { .object([.init("role", .string(role.rawValue))]) }
    private static func totp(_ state: String) -> RawJSON { .object([.init("totp", .string(state))]) }

    private func appID(_ appKey: String) async throws(StoreError) -> Int64? {
        try await StoreError.mapping {
            try await self.client.query("SELECT id FROM apps WHERE app_key = \(appKey)", logger: self.logger).decode(Int64.self).array().first
        }
    }

    private func accountID(_ email: EmailAddress) async throws(StoreError) -> Int64? {
        try await StoreError.mapping {
            try await self.client.query("SELECT id FROM accounts WHERE email = \(email.value)", logger: self.logger)
                .decode(Int64.self).array().first
        }
    }

    private func accountID(_ email: EmailAddress, on connection: PostgresConnection) async throws -> Int64? {
        try await connection.query("SELECT id FROM accounts WHERE email = \(email.value)", logger: self.logger).decode(Int64.self).array().first
    }

    private static func endSessions(of accountID: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await connection.query("DELETE FROM console_sessions WHERE account_id = \(accountID)", logger: logger)
    }

    private static func unseal(_ sealed: Data, email: EmailAddress, serverKey: ServerKey) throws(StoreError) -> TOTP {
        let secret = SealedSecret.totpSecret(email: email.value)
        do { return TOTP(secret: Array(try serverKey.open(sealed, boundTo: secret.context))) } catch {
            throw .unreadableSecret(secret, reason: "\(error)")
        }
    }
}

