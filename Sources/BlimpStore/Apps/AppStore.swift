import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Apps (tenants) in PostgreSQL.
public struct AppStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Stores a new app with freshly issued credentials. Secrets are stored as digests; the `.p8` key and the app
    /// secret (which the SDK signs requests with) are also sealed under `serverKey`, bound to the app key.
    public func create(
        _ app: NewApp,
        credentials: AppCredentials,
        serverKey: ServerKey
    ) async throws(AppStoreError) -> App {
        let apps = try await self.fetch(
            """
            INSERT INTO apps (app_key, name, bundle_id, app_secret_sha256, master_secret_sha256,
                              apns_key_id, apns_team_id, apns_environment, apns_key_sealed, app_secret_sealed)
            VALUES (\(credentials.appKey), \(app.name), \(app.bundleID),
                    \(Self.digest(of: credentials.appSecret)), \(Self.digest(of: credentials.masterSecret)),
                    \(app.signingKey.keyID), \(app.signingKey.teamID), \(app.environment.rawValue),
                    \(Self.seal(app.signingKey, appKey: credentials.appKey, serverKey: serverKey)),
                    \(Self.seal(secret: credentials.appSecret, appKey: credentials.appKey, serverKey: serverKey)))
            RETURNING \(unescaped: Self.columns)
            """
        )
        guard let created = apps.first else { throw .database(reason: "the insert returned no row") }
        return created
    }

    /// Every app, oldest first.
    public func list() async throws(AppStoreError) -> [App] {
        try await self.fetch("SELECT \(unescaped: Self.columns) FROM apps ORDER BY id")
    }

    /// The app with this app key, if any.
    public func find(appKey: String) async throws(AppStoreError) -> App? {
        try await self.fetch("SELECT \(unescaped: Self.columns) FROM apps WHERE app_key = \(appKey)").first
    }

    /// What authenticates requests for `appKey`: the app, its secrets' digests, the app secret itself (unsealed with
    /// `serverKey`) and the previous one while its overlap lasts, or `nil` when there is no such app.
    public func credentials(appKey: String, serverKey: ServerKey) async throws(AppStoreError) -> StoredCredentials? {
        let row = try await self.mapErrors { () async throws -> CredentialRow? in
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: Self.columns), app_secret_sha256, master_secret_sha256, app_secret_sealed,
                       ARRAY(SELECT encode(token_sha256, 'base64') FROM api_tokens WHERE api_tokens.app_id = apps.id),
                       device_association,
                       previous_app_secret_sha256, previous_app_secret_sealed, previous_app_secret_expires_at
                FROM apps WHERE app_key = \(appKey)
                """,
                logger: self.logger
            )
            let decoded = rows.decode(
                (Int64, String, String, String, String, String, String, Date, Data, Data, Data?, [String], Bool, Data?, Data?, Date?).self
            )
            for try await (
                id, key, name, bundleID, keyID, teamID, environment, createdAt, appDigest, masterDigest, sealed, tokens, association,
                previousDigest, previousSealed, previousExpiresAt
            ) in decoded {
                return CredentialRow(
                    app: (id, key, name, bundleID, keyID, teamID, environment, createdAt),
                    appSecretDigest: appDigest,
                    masterSecretDigest: masterDigest,
                    appSecretSealed: sealed,
                    apiTokenDigests: tokens,
                    devicesMayAssociate: association,
                    previousAppSecret: try previousDigest.map { digest in
                        guard let previousExpiresAt else { throw AppStoreError.database(reason: "app \(name)'s previous app secret has no expiry") }
                        return (digest, previousSealed, previousExpiresAt)
                    }
                )
            }
            return nil
        }
        guard let row else { return nil }
        let app = try await self.mapErrors { try Self.app(from: row.app) }
        return StoredCredentials(
            app: app,
            appSecretDigest: SecretDigest(bytes: Array(row.appSecretDigest)),
            masterSecretDigest: SecretDigest(bytes: Array(row.masterSecretDigest)),
            apiTokenDigests: row.apiTokenDigests.compactMap { Data(base64Encoded: $0).map { SecretDigest(bytes: Array($0)) } },
            signature: try row.appSecretSealed.map { sealed throws(AppStoreError) in
                try Self.signature(sealed, .appSecret(appKey: app.appKey), serverKey: serverKey)
            },
            previousAppSecret: try row.previousAppSecret.map { previous throws(AppStoreError) in
                StoredCredentials.PreviousAppSecret(
                    digest: SecretDigest(bytes: Array(previous.digest)),
                    signature: try previous.sealed.map { sealed throws(AppStoreError) in
                        try Self.signature(sealed, .previousAppSecret(appKey: app.appKey), serverKey: serverKey)
                    },
                    expiresAt: previous.expiresAt
                )
            },
            devicesMayAssociate: row.devicesMayAssociate
        )
    }

    /// Issues a new master secret and returns it (shown once: only its digest is stored). The previous master secret
    /// stops working at once here; API processes that cached the app's credentials may accept it for up to 30 s more
    /// (`AppDirectory.lifetime`). The app's console sessions, signed in with it, end with it. Server API tokens are
    /// not affected (`revokeToken` revokes them).
    public func rotateMasterSecret(appKey: String) async throws(AppStoreError) -> String {
        let secret = RandomToken.make()
        try await self.updateOne(
            """
            WITH rotated AS (UPDATE apps SET master_secret_sha256 = \(Self.digest(of: secret)) WHERE app_key = \(appKey) RETURNING id),
                 ended AS (DELETE FROM console_sessions WHERE app_id IN (SELECT id FROM rotated))
            SELECT 1 FROM rotated
            """)
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
    public func rotateAppSecret(appKey: String, overlap: TimeInterval, serverKey: ServerKey) async throws(AppStoreError) -> String {
        guard overlap >= 0, overlap <= Self.maximumAppSecretOverlap else { throw .invalidOverlap(overlap) }
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
            WHERE app_key = \(appKey) RETURNING 1
            """
        )
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
        serverKey: ServerKey
    ) async throws(AppStoreError) -> App {
        let apps = try await self.fetch(
            """
            UPDATE apps SET apns_key_id = \(signingKey.keyID), apns_team_id = \(signingKey.teamID),
                            apns_key_sealed = \(Self.seal(signingKey, appKey: appKey, serverKey: serverKey)),
                            apns_environment = coalesce(\(environment?.rawValue), apns_environment)
            WHERE app_key = \(appKey)
            RETURNING \(unescaped: Self.columns)
            """
        )
        guard let app = apps.first else { throw .notFound }
        return app
    }

    /// Allows or forbids the SDK's identify call to associate a device's channel with a named user.
    public func setDeviceAssociation(_ allowed: Bool, appKey: String) async throws(AppStoreError) {
        try await self.updateOne("UPDATE apps SET device_association = \(allowed) WHERE app_key = \(appKey) RETURNING 1")
    }

    /// Issues a bearer token for the app's server API under `name` (unique in the app) and returns it; only its
    /// digest is stored, so it is shown once.
    public func createToken(appKey: String, name: String) async throws(AppStoreError) -> String {
        let token = APIToken.make()
        let inserted = try await self.mapErrors {
            let rows = try await self.client.query(
                """
                INSERT INTO api_tokens (app_id, name, token_sha256)
                SELECT id, \(name), \(Self.digest(of: token)) FROM apps WHERE app_key = \(appKey)
                ON CONFLICT (app_id, name) DO NOTHING
                RETURNING name
                """,
                logger: self.logger
            )
            return try await rows.decode(String.self).array().count
        }
        guard inserted == 1 else {
            guard try await self.find(appKey: appKey) != nil else { throw .notFound }
            throw .duplicate("token name")
        }
        return token
    }

    /// Revokes the app's token called `name`; `false` when there is none.
    public func revokeToken(appKey: String, name: String) async throws(AppStoreError) -> Bool {
        try await self.mapErrors {
            let rows = try await self.client.query(
                """
                DELETE FROM api_tokens USING apps
                WHERE api_tokens.app_id = apps.id AND apps.app_key = \(appKey) AND api_tokens.name = \(name)
                RETURNING api_tokens.name
                """,
                logger: self.logger
            )
            return try await rows.decode(String.self).array().count == 1
        }
    }

    /// The app's server API tokens, oldest first: their names and when they were issued (the tokens themselves are
    /// not stored).
    public func tokens(appKey: String) async throws(AppStoreError) -> [APITokenInfo] {
        let rows = try await self.mapErrors {
            // One row with NULLs for an app without tokens; none for no such app.
            let rows = try await self.client.query(
                """
                SELECT api_tokens.name, api_tokens.created_at
                FROM apps LEFT JOIN api_tokens ON api_tokens.app_id = apps.id
                WHERE apps.app_key = \(appKey)
                ORDER BY api_tokens.created_at, api_tokens.name
                """,
                logger: self.logger
            )
            return try await rows.decode((String?, Date?).self).array()
        }
        guard !rows.isEmpty else { throw .notFound }
        return rows.compactMap { name, createdAt in
            guard let name, let createdAt else { return nil }
            return APITokenInfo(name: name, createdAt: createdAt)
        }
    }

    /// What a worker needs to deliver the app's pushes: the app, its APNs signing key (unsealed with `serverKey`)
    /// and its Live Activity budgets.
    public func delivery(appID: Int64, serverKey: ServerKey) async throws(AppStoreError) -> (app: App, key: APNsSigningKey, budget: PriorityBudget) {
        let row = try await self.mapErrors { () async throws -> (Row, PriorityBudget, Data)? in
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: Self.columns), priority_budget, frequent_priority_budget, start_budget, apns_key_sealed
                FROM apps WHERE id = \(appID)
                """,
                logger: self.logger
            )
            let decoded = rows.decode((Int64, String, String, String, String, String, String, Date, Int, Int, Int, Data).self)
            for try await (id, key, name, bundleID, keyID, teamID, environment, createdAt, perHour, frequent, starts, sealed) in decoded {
                let budget = PriorityBudget(perHour: perHour, frequentPerHour: frequent, startsPerHour: starts)
                return ((id, key, name, bundleID, keyID, teamID, environment, createdAt), budget, sealed)
            }
            return nil
        }
        guard let (appRow, budget, sealed) = row else { throw .notFound }
        let app = try await self.mapErrors { try Self.app(from: appRow) }
        return (app, try Self.unseal(sealed, of: app, serverKey: serverKey), budget)
    }

    /// Sets the app's Live Activity budgets.
    public func setBudget(_ budget: PriorityBudget, appKey: String) async throws(AppStoreError) {
        try await self.updateOne(
            """
            UPDATE apps SET priority_budget = \(budget.perHour), frequent_priority_budget = \(budget.frequentPerHour),
                            start_budget = \(budget.startsPerHour)
            WHERE app_key = \(appKey) RETURNING 1
            """
        )
    }

    /// The `.p8` key sealed in `sealed`, bound to the app's key.
    private static func unseal(_ sealed: Data, of app: App, serverKey: ServerKey) throws(AppStoreError) -> APNsSigningKey {
        do {
            let pem = try serverKey.open(sealed, boundTo: SealedSecret.apnsKey(appKey: app.appKey).context)
            return try APNsSigningKey(pem: String(decoding: pem, as: UTF8.self), keyID: app.apnsKeyID, teamID: app.apnsTeamID)
        } catch {
            throw .unreadable(.apnsKey(appKey: app.appKey), reason: "\(error)")
        }
    }

    /// What checks the SDK's tokens signed with the app secret sealed in `sealed` (`secret`, bound to its app key).
    private static func signature(_ sealed: Data, _ secret: SealedSecret, serverKey: ServerKey) throws(AppStoreError) -> SDKSignature {
        do {
            return SDKSignature(appSecret: String(decoding: try serverKey.open(sealed, boundTo: secret.context), as: UTF8.self))
        } catch {
            throw .unreadable(secret, reason: "\(error)")
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

    /// Runs an `UPDATE … WHERE app_key = … RETURNING 1`; ``AppStoreError/notFound`` when it changed no app.
    private func updateOne(_ query: PostgresQuery) async throws(AppStoreError) {
        let updated = try await self.mapErrors {
            try await self.client.query(query, logger: self.logger).decode(Int.self).array().count
        }
        guard updated == 1 else { throw .notFound }
    }

    // MARK: - Rows

    private typealias Row = (Int64, String, String, String, String, String, String, Date)

    /// The columns `credentials(appKey:serverKey:)` reads, by name.
    private struct CredentialRow: Sendable {
        let app: Row
        let appSecretDigest: Data
        let masterSecretDigest: Data
        let appSecretSealed: Data?
        /// The API tokens' digests, in base64.
        let apiTokenDigests: [String]
        let devicesMayAssociate: Bool
        let previousAppSecret: (digest: Data, sealed: Data?, expiresAt: Date)?
    }

    private static let columns =
        "id, app_key, name, bundle_id, apns_key_id, apns_team_id, apns_environment, created_at"

    private static func app(from row: Row) throws -> App {
        let (id, appKey, name, bundleID, keyID, teamID, environment, createdAt) = row
        guard let environment = APNsEnvironment(rawValue: environment) else {
            throw AppStoreError.database(reason: "app \(name) has an unknown APNs environment")
        }
        return App(
            id: id,
            appKey: appKey,
            name: name,
            bundleID: bundleID,
            apnsKeyID: keyID,
            apnsTeamID: teamID,
            apnsEnvironment: environment,
            createdAt: createdAt
        )
    }

    private func fetch(_ query: PostgresQuery) async throws(AppStoreError) -> [App] {
        try await self.mapErrors {
            var apps: [App] = []
            for try await row in try await self.client.query(query, logger: self.logger).decode(Row.self) {
                apps.append(try Self.app(from: row))
            }
            return apps
        }
    }

    /// Runs `body` within ``StoreError/deadline`` (as every store operation), turning database errors into
    /// ``AppStoreError``s that name no secret.
    private func mapErrors<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws(AppStoreError) -> T {
        do {
            return try await withAbandoningTimeout(StoreError.deadline, body)
        } catch let error as AppStoreError {
            throw error
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw .duplicate(error.serverInfo?[.constraintName] == "apps_name_key" ? "name" : "app key")
        } catch {
            throw .database(reason: DatabaseError.reason(for: error))
        }
    }
}

/// Why an app operation failed, in one line without secrets.
public enum AppStoreError: Error, CustomStringConvertible {
    case duplicate(String)
    case notFound
    /// A sealed secret that does not open, or (the `.p8` key) does not parse.
    case unreadable(SealedSecret, reason: String)
    /// An app secret rotation's overlap outside 0 to `AppStore.maximumAppSecretOverlap` seconds.
    case invalidOverlap(TimeInterval)
    case database(reason: String)

    public var description: String {
        switch self {
        case .duplicate(let what): "an app with this \(what) already exists"
        case .notFound: "no such app"
        case .unreadable(let secret, let reason): "\(secret) cannot be read: \(reason)"
        case .invalidOverlap(let seconds):
            "the previous app secret's overlap must be 0 to \(Int(AppStore.maximumAppSecretOverlap / 86400)) days (got \(seconds) seconds)"
        case .database(let reason): "database error: \(reason)"
        }
    }
}
