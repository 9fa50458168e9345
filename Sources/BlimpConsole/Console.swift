import BlimpCore
import BlimpStore
import Foundation
import Hummingbird

/// The web console under `/console`: marketers send by activity name, admins inspect channels, activities and pushes
/// and manage apps. Pages are rendered on the server from the same stores the API uses (the composition root passes
/// the API's own); every page and action is scoped to the session's app.
public struct Console: Sendable {
    let configuration: ConsoleConfiguration
    let stores: Stores
    let serverKey: ServerKey
    let now: @Sendable () -> Date

    public init(
        configuration: ConsoleConfiguration, stores: Stores, serverKey: ServerKey, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configuration = configuration
        self.stores = stores
        self.serverKey = serverKey
        self.now = now
    }

    /// Adds the console's routes under `/console`.
    public func addRoutes(to router: Router<some RequestContext>) {
        let stores = self.stores
        let renderer = PageRenderer()
        let gate = ConsoleGate(
            sessions: stores.sessions, apps: stores.apps, accounts: stores.accounts,
            adminToken: self.configuration.adminToken.map { SecretDigest(of: $0) }, secureCookies: self.configuration.secureCookies,
            clientAddress: self.configuration.clientAddress, now: self.now)

        let root = router.group("console").add(middleware: ConsoleMiddleware(renderer: renderer))
        ConsoleAssets.addRoutes(to: root)
        LoginController(
            gate: gate, apps: stores.apps, accounts: stores.accounts, audit: stores.audit, serverKey: self.serverKey, adminToken: self.configuration.adminToken,
            masterSecretSignIn: self.configuration.masterSecretSignIn, attempts: SharedRateLimiter("sign_in", limit: self.configuration.signIns, buckets: stores.rateBuckets),
            clientAddress: self.configuration.clientAddress, renderer: renderer
        ).addRoutes(to: root)
        AccountPage(gate: gate, accounts: stores.accounts, serverKey: self.serverKey, renderer: renderer).addRoutes(to: root)
        AppsPage(gate: gate, apps: stores.apps, serverKey: self.serverKey, renderer: renderer).addRoutes(to: root)
        AppPage(gate: gate, apps: stores.apps, retention: stores.retention, serverKey: self.serverKey, renderer: renderer).addRoutes(to: root)
        AuditPage(gate: gate, audit: stores.audit, apps: stores.apps, renderer: renderer).addRoutes(to: root)

        let app = root.group("app/:app")
        PeoplePage(gate: gate, accounts: stores.accounts, renderer: renderer).addRoutes(to: app)
        OverviewPage(gate: gate, console: stores.console, renderer: renderer).addRoutes(to: app)
        ChannelsPage(gate: gate, console: stores.console, renderer: renderer).addRoutes(to: app)
        ChannelPage(gate: gate, channels: stores.channels, console: stores.console, renderer: renderer).addRoutes(to: app)
        ActivitiesPage(gate: gate, console: stores.console, renderer: renderer).addRoutes(to: app)
        ActivityPage(gate: gate, channels: stores.channels, reports: stores.reports, renderer: renderer).addRoutes(to: app)
        BroadcastChannelsPage(gate: gate, channels: stores.liveActivityChannels, renderer: renderer).addRoutes(to: app)
        PushesPage(gate: gate, reports: stores.reports, renderer: renderer).addRoutes(to: app)
        EventsPage(gate: gate, events: stores.events, renderer: renderer).addRoutes(to: app)
        WebhooksPage(gate: gate, webhooks: stores.webhooks, renderer: renderer).addRoutes(to: app)
        PushPage(
            gate: gate, reports: stores.reports, control: stores.control, dispatch: stores.dispatch, renderer: renderer
        ).addRoutes(to: app)
        SchedulesPage(gate: gate, schedules: stores.schedules, renderer: renderer).addRoutes(to: app)
        LiveActivityTypesPage(gate: gate, types: stores.liveActivityTypes, renderer: renderer).addRoutes(to: app)
        ComposePage(
            gate: gate, intake: stores.intake, schedules: stores.schedules, dispatch: stores.dispatch,
            types: stores.liveActivityTypes,
            inputs: stores.preparationInputs, renderer: renderer
        ).addRoutes(to: app)
    }
}
