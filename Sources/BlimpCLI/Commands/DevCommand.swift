import ArgumentParser
import BlimpCore
import BlimpStore
import Foundation

/// `blimp dev`: a first run on one machine. Migrates the local database, creates (or reuses) a demo app, prints how
/// to call it, and runs the API in this one process.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run Blimp for local development: migrate, create a demo app, serve the API."
    )

    @Option(help: "Where the server key and the demo app's key and credentials are kept.")
    var stateDir = ".blimp"
    @OptionGroup var listen: ListenOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = self.logging.makeLogger(label: "blimp.dev")
        let state = try StateFolder(path: self.stateDir)
        let serverKey = try state.serverKey()
        let apns = try APNsEndpointSetting.resolve()
        let url = try self.database.resolve()
        try await url.checkReachable(logger: logger)

        let (database, server) = self.listen.buildAPI(database: url, logger: logger)
        var api = server
        // Runs once the database client is up, before the API listens.
        api.beforeServerStarts {
            try await Schema.apply(to: database, logger: logger)
            let demo = try await DemoApp.ensure(
                in: state,
                store: AppStore(client: database, logger: logger),
                serverKey: serverKey
            )
            FileHandle.standardOutput.write(Data(self.banner(demo: demo, apns: apns).utf8))
        }
        try await runServices([database, api], logger: logger)
    }

    func banner(demo: CreatedApp, apns: APNsEndpointSettings) -> String {
        let base = "http://\(self.listen.host):\(self.listen.port)"
        return """

            Blimp is running (Ctrl-C stops it).
              API            \(base)
              Demo app       \(demo.name) (\(demo.bundleID)), credentials in \(self.stateDir)/demo-app.json
              App key        \(demo.appKey)
              App secret     \(demo.appSecret)
              Master secret  \(demo.masterSecret)
              APNs           \(apns.summary)

            Try:
              curl \(base)/health
              curl \(base)/ready


            """
    }
}
