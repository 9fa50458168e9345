import BlimpCore
import BlimpStore
import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// The web console under `/console`: marketers send by activity name, admins inspect channels, activities and pushes
/// and manage apps. Pages are rendered on the server from the same stores the API uses; every page and action is
/// scoped to the session's app.
public struct Console: Sendable {
    let configuration: ConsoleConfiguration
    let database: PostgresClient
    let serverKey: ServerKey
    let logger: Logger
    let now: @Sendable () -> Date

    public init(
        configuration: ConsoleConfiguration, database: PostgresClient, serverKey: ServerKey, logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configuration = configuration
        self.database = database
        self.serverKey = serverKey
        self.logger = logger
        self.now = now
    }

    /// Adds the console's routes under `/console`.
    public func addRoutes(to router: Router<some RequestContext>) {
        let (database, logger) = (self.database, self.logger)
        let apps = AppStore(client: database, logger: logger)
        let sessions = ConsoleSessions(client: database, logger: logger)
        let console = ConsoleStore(client: database, logger: logger)
        let reports = PushReports(client: database, logger: logger)
        let dispatch = DispatchStore(client: database, logger: logger)
        let renderer = PageRenderer()
        let gate = ConsoleGate(sessions: sessions, apps: apps, secureCookies: self.configuration.secureCookies, now: self.now)

        let root = router.group("console").add(middleware: ConsoleMiddleware(renderer: renderer))
        ConsoleAssets.addRoutes(to: root)
        LoginController(
            gate: gate, apps: apps, serverKey: self.serverKey, adminToken: self.configuration.adminToken,
            attempts: RateLimiter(self.configuration.signIns), clientAddress: self.configuration.clientAddress, renderer: renderer
        ).addRoutes(to: root)
        AppsPage(gate: gate, apps: apps, serverKey: self.serverKey, renderer: renderer).addRoutes(to: root)
        AppPage(gate: gate, apps: apps, serverKey: self.serverKey, renderer: renderer).addRoutes(to: root)

        let app = root.group("app/:app")
        OverviewPage(gate: gate, console: console, renderer: renderer).addRoutes(to: app)
        ChannelsPage(gate: gate, console: console, renderer: renderer).addRoutes(to: app)
        ChannelPage(
            gate: gate, channels: ChannelStore(client: database, logger: logger, now: self.now), console: console, renderer: renderer
        ).addRoutes(to: app)
        ActivitiesPage(gate: gate, console: console, renderer: renderer).addRoutes(to: app)
        ActivityPage(gate: gate, console: console, reports: reports, renderer: renderer).addRoutes(to: app)
        PushesPage(gate: gate, reports: reports, renderer: renderer).addRoutes(to: app)
        PushPage(
            gate: gate, reports: reports, control: PushControl(client: database, logger: logger), dispatch: dispatch, renderer: renderer
        ).addRoutes(to: app)
        ComposePage(
            gate: gate, intake: PushIntake(client: database, logger: logger, now: self.now), dispatch: dispatch, renderer: renderer
        ).addRoutes(to: app)
    }
}
