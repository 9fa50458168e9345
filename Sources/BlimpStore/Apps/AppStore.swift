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
        let sealedKey = serverKey.seal(Data(app.signingKey.pemRepresentation.utf8), boundTo: credentials.appKey)
        let sealedSecret = serverKey.seal(Data(credentials.appSecret.utf8), boundTo: credentials.appKey)
        let apps = try await self.fetch(
            """
            INSERT INTO apps (app_key, name, bundle_id, app_secret_sha256, master_secret_sha256,
                              apns_key_id, apns_team_id, apns_environment, apns_key_sealed, app_secret_sealed)
            VALUES (\(credentials.appKey), \(app.name), \(app.bundleID),
                    \(ByteBuffer(bytes: SecretDigest(of: credentials.appSecret).bytes)),
                    \(ByteBuffer(bytes: SecretDigest(of: credentials.masterSecret).bytes)),
                    \(app.signingKey.keyID), \(app.signingKey.teamID), \(app.environment.rawValue), \(ByteBuffer(bytes: sealedKey)),
                    \(ByteBuffer(bytes: sealedSecret)))
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

    /// What authenticates requests for `appKey`: the app, its secrets' digests and the app secret itself (unsealed
    /// with `serverKey`), or `nil` when there is no such app.
    public func credentials(appKey: String, serverKey: ServerKey) async throws(AppStoreError) -> StoredCredentials? {
        let row = try await self.mapErrors { () async throws -> (Row, Data, Data, Data?, [String], Bool)? in
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: Self.columns), app_secret_sha256, master_secret_sha256, app_secret_sealed,
                       ARRAY(SELECT encode(token_sha256, 'base64') FROM api_tokens WHERE api_tokens.app_id = apps.id),
                       device_association
                FROM apps WHERE app_key = \(appKey)
                """,
                logger: self.logger
            )
            let decoded = rows.decode((Int64, String, String, String, String, String, String, Date, Data, Data, Data?, [String], Bool).self)
            for try await (id, key, name, bundleID, keyID, teamID, environment, createdAt, appDigest, masterDigest, sealed, tokens, association)
                in decoded
            {
                return ((id, key, name, bundleID, keyID, teamID, environment, createdAt), appDigest, masterDigest, sealed, tokens, association)
            }
            return nil
        }
        guard let (appRow, appDigest, masterDigest, sealed, tokenDigests, devicesMayAssociate) = row else { return nil }
        let app = try await self.mapErrors { try Self.app(from: appRow) }
        var signature: SDKSignature?
        if let sealed {
            do {
                signature = SDKSignature(appSecret: String(decoding: try serverKey.open(sealed, boundTo: app.appKey), as: UTF8.self))
            } catch {
                throw .unreadableKey(app.name, reason: "\(error)")
            }
        }
        return StoredCredentials(
            app: app,
            appSecretDigest: SecretDigest(bytes: Array(appDigest)),
            masterSecretDigest: SecretDigest(bytes: Array(masterDigest)),
            apiTokenDigests: tokenDigests.compactMap { Data(base64Encoded: $0).map { SecretDigest(bytes: Array($0)) } },
            signature: signature,
            devicesMayAssociate: devicesMayAssociate
        )
    }

    /// Allows or forbids the SDK's identify call to associate a device's channel with a named user.
    public func setDeviceAssociation(_ allowed: Bool, appKey: String) async throws(AppStoreError) {
        let updated = try await self.mapErrors {
            try await self.client.query(
                "UPDATE apps SET device_association = \(allowed) WHERE app_key = \(appKey) RETURNING 1", logger: self.logger
            ).collect().count
        }
        guard updated == 1 else { throw .notFound }
    }

    /// Issues a bearer token for the app's server API under `name` (unique in the app) and returns it; only its
    /// digest is stored, so it is shown once.
    public func createToken(appKey: String, name: String) async throws(AppStoreError) -> String {
        let token = APIToken.make()
        let inserted = try await self.mapErrors {
            let rows = try await self.client.query(
                """
                INSERT INTO api_tokens (app_id, name, token_sha256)
                SELECT id, \(name), \(ByteBuffer(bytes: SecretDigest(of: token).bytes)) FROM apps WHERE app_key = \(appKey)
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
        let updated = try await self.mapErrors {
            try await self.client.query(
                """
                UPDATE apps SET priority_budget = \(budget.perHour), frequent_priority_budget = \(budget.frequentPerHour),
                                start_budget = \(budget.startsPerHour)
                WHERE app_key = \(appKey) RETURNING 1
                """,
                logger: self.logger
            ).decode(Int.self).array().count
        }
        guard updated == 1 else { throw .notFound }
    }

    /// The `.p8` key sealed in `sealed`, bound to the app's key.
    private static func unseal(_ sealed: Data, of app: App, serverKey: ServerKey) throws(AppStoreError) -> APNsSigningKey {
        do {
            let pem = try serverKey.open(sealed, boundTo: app.appKey)
            return try APNsSigningKey(pem: String(decoding: pem, as: UTF8.self), keyID: app.apnsKeyID, teamID: app.apnsTeamID)
        } catch {
            throw .unreadableKey(app.name, reason: "\(error)")
        }
    }

    // MARK: - Rows

    private typealias Row = (Int64, String, String, String, String, String, String, Date)

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
    case unreadableKey(String, reason: String)
    case database(reason: String)

    public var description: String {
        switch self {
        case .duplicate(let what): "an app with this \(what) already exists"
        case .notFound: "no such app"
        case .unreadableKey(let name, let reason): "the APNs key of app \(name) cannot be read: \(reason)"
        case .database(let reason): "database error: \(reason)"
        }
    }
}
