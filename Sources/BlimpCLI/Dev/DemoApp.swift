import BlimpCore
import BlimpStore
import Foundation

/// The app `blimp dev` creates on its first run, with a generated `.p8` key, and reuses afterwards: its credentials
/// are kept in the state folder's `demo-app.json`.
enum DemoApp {
    static let name = "demo"
    static let bundleID = "com.example.blimp.demo"
    static let keyID = "DEMOKEY001"
    static let teamID = "DEMOTEAM01"

    /// The demo app's credentials: the stored ones if that app still exists, else a newly created app's.
    static func ensure(in state: StateFolder, store: AppStore, serverKey: ServerKey) async throws -> CreatedApp {
        if let saved = state.read("demo-app.json"),
            let app = try? JSONDecoder().decode(CreatedApp.self, from: Data(saved.utf8)),
            try await store.find(appKey: app.appKey) != nil
        {
            return app
        }
        let app = try NewApp(
            name: Self.name,
            bundleID: Self.bundleID,
            signingKey: APNsSigningKey(pem: try state.demoKeyPEM(keyID: Self.keyID), keyID: Self.keyID, teamID: Self.teamID),
            environment: .sandbox
        )
        let credentials = AppCredentials.issue()
        do {
            _ = try await store.create(app, credentials: credentials, serverKey: serverKey)
        } catch .duplicate {
            throw CLIError(
                "the database already has an app named \"\(Self.name)\" whose credentials are not in \(state.file("demo-app.json")); use that folder, or another database"
            )
        }
        let created = CreatedApp(app: app, credentials: credentials)
        try state.write("demo-app.json", try created.json() + "\n")
        return created
    }
}
