import BlimpCore
import BlimpStore
import PostgresNIO

/// Apps created in a test database, with the credentials they were issued.
public enum TestApps {
    public static func create(
        named name: String,
        in client: Database,
        serverKey: ServerKey
    ) async throws -> (app: App, credentials: AppCredentials) {
        let new = try NewApp(
            name: name,
            bundleID: "com.example.\(name.lowercased())",
            signingKey: APNsSigningKey(pem: TestKeys.p8(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ"),
            environment: .sandbox
        )
        let credentials = AppCredentials.issue()
        let app = try await AppStore(client: client, logger: TestDatabase.logger)
            .create(new, credentials: credentials, serverKey: serverKey)
        return (app, credentials)
    }
}
