import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Apps (tenants) in PostgreSQL. Every credential change is recorded in the audit trail (``AuditLog``) in its own
/// transaction, by the origin given: the command line's unless the console says whose.
public struct AppStore: Sendable {
    let client: Database
    let logger: Logger
    let now: @Sendable () -> Date

    public init(client: Database, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
    }

    /// Stores a new app with freshly issued credentials. Secrets are stored as digests; the `.p8` key and the app
    /// secret (which the SDK signs requests with) are also sealed under `serverKey`, bound to the app key.
    public func create(
        _ app: NewApp,
        credentials: AppCredentials,
        serverKey: ServerKey,
        by origin: AuditOrigin = .commandLine
    ) async throws(StoreError) -> App {
        let query: PostgresQuery = """
            INSERT INTO apps (app_key, name, bundle_id, app_secret_sha256, master_secret_sha256,
                              apns_key_id, apns_team_id, apns_environment, apns_key_sealed, app_secret_sealed)
            VALUES (\(credentials.appKey), \(app.name), \(app.bundleID),
                    \(Self.digest(of: credentials.appSecret)), \(Self.digest(of: credentials.masterSecret)),
                    \(app.signingKey.keyID), \(app.signingKey.teamID), \(app.environment.rawValue),
                    \(Self.seal(app.signingKey, appKey: credentials.appKey, serverKey: serverKey)),
                    \(Self.seal(secret: credentials.appSecret, appKey: credentials.appKey, serverKey: serverKey)))
            RETURNING \(unescaped: AppColumn.selectList(AppColumn.app))
            """
        let apps = try await self.recorded { connection in
            let apps = try Self.apps(try await connection.query(query, logger: self.logger).collect())
            return (apps, apps.map { origin.entry(appID: $0.id, .appCreated, subject: $0.appKey, details: .object([.init("name", .string($0.name))])) })
        }
        guard let created = apps.first else { throw .database(reason: "the insert returned no row") }
        return created
    }

    /// Every app, oldest first.
    public func list() async throws(StoreError) -> [App] {
        try await self.fetch("SELECT \(unescaped: AppColumn.selectList(AppColumn.app)) FROM apps ORDER BY id")
    }

    /// The app with this app key, if any.
    public func find(appKey: String) async throws(StoreError) -> App? {
        try await self.fetch("SELECT \(unescaped: AppColumn.selectList(AppColumn.app)) FROM apps WHERE app_key = \(appKey)").first
    }

    /// What authenticates requests for `appKey`: the app, its secrets' digests, the app secret itself (unsealed with
    /// `serverKey`) and the previous one while its overlap lasts, or `nil` when there is no such app.
    public func credentials(appKey: String, serverKey: ServerKey) async throws(StoreError) -> StoredCredentials? {
        let rows = try await self.mapErrors {
            try await self.client.query(
                "SELECT \(unescaped: AppColumn.selectList(AppColumn.credentials)) FROM apps WHERE app_key = \(appKey)",
                logger: self.logger
            ).collect()
        }
        guard let row = rows.first.map(NamedRow<AppColumn>.init) else { return nil }
        let (app, sealed, previousSealed) = try Self.reading { () throws(UnreadableColumn) in
            (try Self.app(row), try row.decode(.appSecretSealed, as: Data?.self), try row.decode(.previousAppSecretSealed, as: Data?.self))
        }
        let signature = try sealed.map { sealed throws(StoreError) in
            try Self.signature(sealed, .appSecret(appKey: app.appKey), serverKey: serverKey)
        }
        let previousSignature = try previousSealed.map { sealed throws(StoreError) in
            try Self.signature(sealed, .previousAppSecret(appKey: app.appKey), serverKey: serverKey)
        }
        return try Self.reading { () throws(UnreadableColumn) in
            let previousDigest: Data? = try row.decode(.previousAppSecretDigest)
            return StoredCredentials(
                app: app,
                appSecretDigest: try Self.digest(row, .appSecretDigest),
                masterSecretDigest: try Self.digest(row, .masterSecretDigest),
                apiTokens: try row.decode(.apiTokens, as: [String].self).compactMap(StoredCredentials.APITokenDigest.init),
                signature: signature,
                previousAppSecret: try previousDigest.map { digest throws(UnreadableColumn) in
                    StoredCredentials.PreviousAppSecret(
                        digest: SecretDigest(bytes: Array(digest)), signature: previousSignature,
                        expiresAt: try row.decode(.previousAppSecretExpiresAt))
                },
                devicesMayAssociate: try row.decode(.deviceAssociation)
            )
        }
    }

    /// Issues a new master secret and returns it (shown once: only its digest is stored). The previous master secret
    /// stops working at once here; API processes that cached the app's credentials may accept it for up to 30 s more
    /// (`AppDirectory.lifetime`). The app's console sessions, signed in with it, end with it. Server API tokens are
    /// not affected (`revokeToken` revokes them).
    public func rotateMasterSecret(appKey: String, by origin: AuditOrigin = .commandLine) async throws(StoreError) -> String {
        let secret = RandomToken.make()
        try await self.updateOne(
            """
            WITH rotated AS (UPDATE apps SET master_secret_sha256 = \(Self.digest(of: secret)) WHERE app_key = \(appKey) RETURNING id),
                 ended AS (DELETE FROM console_sessions WHERE app_id IN (SELECT id FROM rotated))
            SELECT id FROM rotated
            """,
            recording: { origin.credentialChanged(appID: $0, .masterSecret) })
        return secret
    }

    /// The longest overlap `rotateAppSecret` grants the previous app secret: 90 days.
    public static let maximumAppSecretOverlap: TimeInterval = 90 * 24 * 3600

    /// Issues a new app secret (stored as a digest and sealed under `serverKey`, like `create`'s) and returns it,
    /// shown once. The app secret ships inside every installed app, so the previous one stays valid for `overlap`
    /// seconds from now by the database's clock (0 to ``maximumAppSecretOverlap``), in Basic authentication and in
    /// the SDK's signed tokens, while users update the app; with an overlap of 0 it stops working at once (API
    /// processes that cached the app's credentials may accept it for up to 30 s more, `AppDirectory.lifetime`).
    ///
    /// Only one previous secret is kept: rotating again ends the earlier secret's overlap at once.
    public func rotateAppSecret(
        appKey: String, overlap: TimeInterval, serverKey: ServerKey, by origin: AuditOrigin = .commandLine
    ) async throws(StoreError) -> String {
        guard overlap >= 0, overlap <= Self.maximumAppSecretOverlap else {
            throw .invalid(
                "the previous app secret's overlap must be 0 to \(Int(Self.maximumAppSecretOverlap / 86400)) days (got \(overlap) seconds)")
        }
        let secret = RandomToken.make()
        let keepsPrevious = overlap > 0
        // Every right-hand side reads the row as it was, so the previous columns take the secret being replaced.
        try await self.updateOne(
            """
            UPDATE apps SET
                previous_app_secret_sha256 = CASE WHEN \(keepsPrevious) THEN app_secret_sha256 END,
                previous_app_secret_sealed = CASE WHEN \(keepsPrevious) THEN app_secret_sealed END,
                previous_app_secret_expires_at = CASE WHEN \(keepsPrevious) THEN now() + make_interval(secs => \(overlap)) END,
                app_secret_sha256 = \(Self.digest(of: secret)),
                app_secret_sealed = \(Self.seal(secret: secret, appKey: appKey, serverKey: serverKey))
            WHERE app_key = \(appKey) RETURNING id
            """,
            recording: { origin.credentialChanged(appID: $0, .appSecret, details: .object([.init("overlap_seconds", .integer(Int64(overlap)))])) })
        return secret
    }

    /// Replaces the app's APNs signing key (a new `.p8` with its key and team ids), sealed under `serverKey` like
    /// `create`'s, and with `environment` its APNs environment too; returns the app as it now is. Workers keep an
    /// app's delivery profile for a minute (`Worker`), so pushes go out with the new key within 60 s.
    @discardableResult
    public func replaceAPNsKey(
        appKey: String,
        signingKey: APNsSigningKey,
        environment: APNsEnvironment? = nil,
        serverKey: ServerKey,
        by origin: AuditOrigin = .commandLine
    ) async throws(StoreError) -> App {
        let query: PostgresQuery = """
            UPDATE apps SET apns_key_id = \(signingKey.keyID), apns_team_id = \(signingKey.teamID),
                            apns_key_sealed = \(Self.seal(signingKey, appKey: appKey, serverKey: serverKey)),
                            apns_environment = coalesce(\(environment?.rawValue), apns_environment)
            WHERE app_key = \(appKey)
            RETURNING \(unescaped: AppColumn.selectList(AppColumn.app))
            """
        let apps = try await self.recorded { connection in
            let apps = try Self.apps(try await connection.query(query, logger: self.logger).collect())
            return (apps, apps.map { app in
                origin.credentialChanged(appID: app.id, .apnsKey, details: .object([
                    .init("key_id", .string(app.apnsKeyID)), .init("team_id", .string(app.apnsTeamID)),
                    .init("environment", .string(app.apnsEnvironment.rawValue)),
                ]))
            })
        }
        guard let app = apps.first else { throw .noSuchApp }
        return app
    }

    /// Allows or forbids the SDK's identify call to associate a device's channel with a named user.
    public func setDeviceAssociation(_ allowed: Bool, appKey: String, by origin: AuditOrigin = .commandLine) async throws(StoreError) {
        try await self.updateOne(
            "UPDATE apps SET device_association = \(allowed) WHERE app_key = \(appKey) RETURNING id",
            recording: { origin.entry(appID: $0, .appChanged, subject: appKey, details: .object([.init("device_association", .bool(allowed))])) })
    }

    /// Writes, or stops writing, a `SEND` event per device sent to the app's event stream (``EventLog``).
    public func setSendEvents(_ on: Bool, appKey: String, by origin: AuditOrigin = .commandLine) async throws(StoreError) {
        try await self.updateOne(
            "UPDATE apps SET send_events = \(on) WHERE app_key = \(appKey) RETURNING id",
            recording: { origin.entry(appID: $0, .appChanged, subject: appKey, details: .object([.init("send_events", .bool(on))])) })
    }

    /// Issues a bearer token for the app's server API under `name` (unique in the app) and returns it; only its
    /// digest is stored, so it is shown once.
    public func createToken(appKey: String, name: String, by origin: AuditOrigin = .commandLine) async throws(StoreError) -> String {
        let token = APIToken.make()
        let inserted = try await self.recorded { connection in
            let rows = try await connection.query(
                """
                INSERT INTO api_tokens (app_id, name, token_sha256)
                SELECT id, \(name), \(Self.digest(of: token)) FROM apps WHERE app_key = \(appKey)
                ON CONFLICT (app_id, name) DO NOTHING
                RETURNING app_id, token_id
                """,
                logger: self.logger
            )
            let issued = try await rows.decode((Int64, UUID).self).array()
            return (issued.count, issued.map { Self.tokenChanged(.apiTokenIssued, appID: $0.0, tokenID: $0.1, name: name, by: origin) })
        }
        guard inserted == 1 else {
            guard try await self.find(appKey: appKey) != nil else { throw .noSuchApp }
            throw .duplicate("token name")
        }
        return token
    }

    /// Revokes the app's token called `name`; `false` when there is none.
    public func revokeToken(appKey: String, name: String, by origin: AuditOrigin = .commandLine) async throws(StoreError) -> Bool {
        try await self.recorded { connection in
            let rows = try await connection.query(
                """
                DELETE FROM api_tokens USING apps
                WHERE api_tokens.app_id = apps.id AND apps.app_key = \(appKey) AND api_tokens.name = \(name)
                RETURNING api_tokens.app_id, api_tokens.token_id
                """,
                logger: self.logger
            )
            let revoked = try await rows.decode((Int64, UUID).self).array()
            return (revoked.count == 1, revoked.map { Self.tokenChanged(.apiTokenRevoked, appID: $0.0, tokenID: $0.1, name: name, by: origin) })
        }
    }

    /// A token's `credential.changed` entry: its name and stable id, never the token.
    private static func tokenChanged(_ credential: AuditCredential, appID: Int64, tokenID: UUID, name: String, by origin: AuditOrigin) -> AuditEntry {
        origin.credentialChanged(appID: appID, credential, details: .object([
            .init("name", .string(name)), .init("token_id", .string(tokenID.lowercaseString)),
        ]))
    }

    /// The app's server API tokens, oldest first: their names and when they were issued (the tokens themselves are
    /// not stored).
    public func tokens(appKey: String) async throws(StoreError) -> [APITokenInfo] {
        let rows = try await self.mapErrors {
            // One row with NULLs for an app without tokens; none for no such app.
            let rows = try await self.client.query(
                """
                SELECT api_tokens.token_id, api_tokens.name, api_tokens.created_at
                FROM apps LEFT JOIN api_tokens ON api_tokens.app_id = apps.id
                WHERE apps.app_key = \(appKey)
                ORDER BY api_tokens.created_at, api_tokens.name
                """,
                logger: self.logger
            )
            return try await rows.decode((UUID?, String?, Date?).self).array()
        }
        guard !rows.isEmpty else { throw .noSuchApp }
        return rows.compactMap { id, name, createdAt in
            guard let id, let name, let createdAt else { return nil }
            return APITokenInfo(id: id, name: name, createdAt: createdAt)
        }
    }

    /// What a worker needs to deliver the app's pushes: the app, its APNs signing key (unsealed with `serverKey`)
    /// and its Live Activity budgets.
    public func delivery(appID: Int64, serverKey: ServerKey) async throws(StoreError) -> (app: App, key: APNsSigningKey, budget: PriorityBudget) {
        let rows = try await self.mapErrors {
            try await self.client.query(
                "SELECT \(unescaped: AppColumn.selectList(AppColumn.delivery)) FROM apps WHERE id = \(appID)", logger: self.logger
            ).collect()
        }
        guard let row = rows.first.map(NamedRow<AppColumn>.init) else { throw .noSuchApp }
        let (app, budget, sealed) = try Self.reading { () throws(UnreadableColumn) in
            let budget = PriorityBudget(
                perHour: try row.decode(.priorityBudget), frequentPerHour: try row.decode(.frequentPriorityBudget),
                startsPerHour: try row.decode(.startBudget))
            return (try Self.app(row), budget, try row.decode(.apnsKeySealed, as: Data.self))
        }
        return (app, try Self.unseal(sealed, of: app, serverKey: serverKey), budget)
    }

    /// Sets how late the app's schedules may still fire after Blimp was down (seconds), and the time zone of its
    /// channels without a valid one for local-time schedules; each when given. A zone PostgreSQL does not know is
    /// `.invalid`.
    public func setScheduling(
        graceSeconds: Int?, defaultTimeZone: String?, appKey: String, by origin: AuditOrigin = .commandLine
    ) async throws(StoreError) {
        if let zone = defaultTimeZone {
            let known = try await StoreError.mapping {
                try await self.client.query("SELECT 1 FROM time_zones WHERE name = \(zone)", logger: self.logger).decode(Int.self).array()
            }
            guard !known.isEmpty else { throw .invalid("'\(zone)' is not a time zone PostgreSQL knows (see pg_timezone_names), e.g. Europe/Berlin") }
        }
        try await self.updateOne(
            """
            UPDATE apps SET schedule_grace_seconds = coalesce(\(graceSeconds), schedule_grace_seconds),
                            default_time_zone = coalesce(\(defaultTimeZone), default_time_zone)
            WHERE app_key = \(appKey) RETURNING id
            """,
            recording: { appID in
                var details: [RawJSON.Member] = []
                if let graceSeconds { details.append(.init("schedule_grace_seconds", .integer(Int64(graceSeconds)))) }
                if let defaultTimeZone { details.append(.init("default_time_zone", .string(defaultTimeZone))) }
                return origin.entry(appID: appID, .appChanged, subject: appKey, details: .object(details))
            })
    }

    /// Sets the app's Live Activity budgets.
    public func setBudget(_ budget: PriorityBudget, appKey: String, by origin: AuditOrigin = .commandLine) async throws(StoreError) {
        try await self.updateOne(
            """
            UPDATE apps SET priority_budget = \(budget.perHour), frequent_priority_budget = \(budget.frequentPerHour),
                            start_budget = \(budget.startsPerHour)
            WHERE app_key = \(appKey) RETURNING id
            """,
            recording: { appID in
                origin.entry(appID: appID, .appChanged, subject: appKey, details: .object([
                    .init("priority_budget", .integer(Int64(budget.perHour))),
                    .init("frequent_priority_budget", .integer(Int64(budget.frequentPerHour))),
                    .init("start_budget", .integer(Int64(budget.startsPerHour))),
                ]))
            })
    }

    /// The `.p8` key sealed in `sealed`, bound to the app's key.
    private static func unseal(_ sealed: Data, of app: App, serverKey: ServerKey) throws(StoreError) -> APNsSigningKey {
        do {
            let pem = try serverKey.open(sealed, boundTo: SealedSecret.apnsKey(appKey: app.appKey).context)
            return try APNsSigningKey(pem: String(decoding: pem, as: UTF8.self), keyID: app.apnsKeyID, teamID: app.apnsTeamID)
        } catch {
            throw .unreadableSecret(.apnsKey(appKey: app.appKey), reason: "\(error)")
        }
    }

    /// What checks the SDK's tokens signed with the app secret sealed in `sealed` (`secret`, bound to its app key).
    private static func signature(_ sealed: Data, _ secret: SealedSecret, serverKey: ServerKey) throws(StoreError) -> SDKSignature {
        do {
            return SDKSignature(appSecret: String(decoding: try serverKey.open(sealed, boundTo: secret.context), as: UTF8.self))
        } catch {
            throw .unreadableSecret(secret, reason: "\(error)")
        }
    }

    /// The `.p8` key sealed under `serverKey`, bound to the app key, as stored in `apns_key_sealed`.
    private static func seal(_ key: APNsSigningKey, appKey: String, serverKey: ServerKey) -> ByteBuffer {
        ByteBuffer(bytes: serverKey.seal(Data(key.pemRepresentation.utf8), boundTo: appKey))
    }

    /// The app secret sealed under `serverKey`, bound to the app key, as stored in `app_secret_sealed`.
    private static func seal(secret: String, appKey: String, serverKey: ServerKey) -> ByteBuffer {
        ByteBuffer(bytes: serverKey.seal(Data(secret.utf8), boundTo: appKey))
    }

    /// A secret's digest, as stored.
    private static func digest(of secret: String) -> ByteBuffer {
        ByteBuffer(bytes: SecretDigest(of: secret).bytes)
    }

    /// Runs a change of one app that returns its id (`RETURNING id`) and records `entry` for it, in one transaction;
    /// ``StoreError/noSuchApp`` when it changed no app.
    func updateOne(_ query: PostgresQuery, recording entry: @escaping @Sendable (Int64) -> AuditEntry) async throws(StoreError) {
        let updated = try await self.recorded { connection in
            let ids = try await connection.query(query, logger: self.logger).decode(Int64.self).array()
            return (ids.count, ids.map(entry))
        }
        guard updated == 1 else { throw .noSuchApp }
    }

    /// Runs `change` and records the audit entries it returns, in one transaction.
    private func recorded<T: Sendable>(
        _ change: @escaping @Sendable (PostgresConnection) async throws -> (T, [AuditEntry])
    ) async throws(StoreError) -> T {
        let at = self.now()
        return try await self.mapErrors {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let (result, entries) = try await change(connection)
                try await AuditLog.record(entries, at: at, on: connection, logger: self.logger)
                return result
            }
        }
    }

    // MARK: - Rows

    /// The app in `row`.
    private static func app(_ row: NamedRow<AppColumn>) throws(UnreadableColumn) -> App {
        App(
            id: try row.decode(.id),
            appKey: try row.decode(.appKey),
            name: try row.decode(.name),
            bundleID: try row.decode(.bundleID),
            apnsKeyID: try row.decode(.apnsKeyID),
            apnsTeamID: try row.decode(.apnsTeamID),
            apnsEnvironment: try row.decode(.apnsEnvironment),
            createdAt: try row.decode(.createdAt)
        )
    }

    private static func digest(_ row: NamedRow<AppColumn>, _ column: AppColumn) throws(UnreadableColumn) -> SecretDigest {
        SecretDigest(bytes: Array(try row.decode(column, as: Data.self)))
    }

    /// Runs `body`, an app row's reading: a column that cannot be read is a database error naming it.
    private static func reading<T>(_ body: () throws(UnreadableColumn) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw .database(reason: "an app cannot be read: \(error)")
        }
    }

    private func fetch(_ query: PostgresQuery) async throws(StoreError) -> [App] {
        let rows = try await self.mapErrors { try await self.client.query(query, logger: self.logger).collect() }
        return try Self.apps(rows)
    }

    private static func apps(_ rows: [PostgresRow]) throws(StoreError) -> [App] {
        try Self.reading { () throws(UnreadableColumn) in try rows.map { row throws(UnreadableColumn) in try Self.app(NamedRow(row)) } }
    }

    /// Runs `body` as every store operation runs (``StoreError/mapping(_:)``), a duplicate name or app key told apart
    /// by its constraint.
    private func mapErrors<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws(StoreError) -> T {
        try await StoreError.mapping(body, duplicates: ["apps_name_key": "name", "apps_app_key_key": "app key"])
    }
}
