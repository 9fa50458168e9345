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

    /// Stores a new app with freshly issued credentials. Secrets are stored as digests, and the `.p8` key is sealed
    /// under `serverKey`, bound to the app key.
    public func create(
        _ app: NewApp,
        credentials: AppCredentials,
        serverKey: ServerKey
    ) async throws(AppStoreError) -> App {
        let sealedKey = serverKey.seal(Data(app.signingKey.pemRepresentation.utf8), boundTo: credentials.appKey)
        let apps = try await self.fetch(
            """
            INSERT INTO apps (app_key, name, bundle_id, app_secret_sha256, master_secret_sha256,
                              apns_key_id, apns_team_id, apns_environment, apns_key_sealed)
            VALUES (\(credentials.appKey), \(app.name), \(app.bundleID),
                    \(ByteBuffer(bytes: SecretDigest(of: credentials.appSecret).bytes)),
                    \(ByteBuffer(bytes: SecretDigest(of: credentials.masterSecret).bytes)),
                    \(app.signingKey.keyID), \(app.signingKey.teamID), \(app.environment.rawValue), \(ByteBuffer(bytes: sealedKey)))
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

    /// Which secret authenticated a request, and so what it may do.
    public enum Role: Sendable, Equatable {
        /// The app secret: device-level APIs only.
        case device
        /// The master secret: the server APIs.
        case master
    }

    /// The app and the role that `secret` grants for `appKey`, or `nil` when they do not match. Digests are
    /// compared in constant time.
    public func authenticate(appKey: String, secret: String) async throws(AppStoreError) -> (App, Role)? {
        try await self.mapErrors {
            let rows = try await self.client.query(
                """
                SELECT \(unescaped: Self.columns), app_secret_sha256, master_secret_sha256
                FROM apps WHERE app_key = \(appKey)
                """,
                logger: self.logger
            )
            let decoded = rows.decode((Int64, String, String, String, String, String, String, Date, Data, Data).self)
            for try await (id, key, name, bundleID, keyID, teamID, environment, createdAt, appDigest, masterDigest) in decoded {
                let app = try Self.app(from: (id, key, name, bundleID, keyID, teamID, environment, createdAt))
                if SecretDigest(bytes: Array(masterDigest)).matches(secret) { return (app, .master) }
                if SecretDigest(bytes: Array(appDigest)).matches(secret) { return (app, .device) }
            }
            return nil
        }
    }

    /// The app's APNs signing key, unsealed with `serverKey`.
    public func signingKey(of app: App, serverKey: ServerKey) async throws(AppStoreError) -> APNsSigningKey {
        let sealed = try await self.mapErrors {
            let rows = try await self.client.query("SELECT apns_key_sealed FROM apps WHERE id = \(app.id)", logger: self.logger)
            for try await sealed in rows.decode(Data.self) { return sealed }
            throw AppStoreError.notFound
        }
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

    /// Runs `body`, turning database errors into ``AppStoreError``s that name no secret.
    private func mapErrors<T>(_ body: () async throws -> T) async throws(AppStoreError) -> T {
        do {
            return try await body()
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
