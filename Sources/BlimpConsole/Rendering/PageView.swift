import BlimpCore
/// What every console page renders: its title, the navigation for whoever is signed in, and the page's own view.
struct PageView<Body>: Sendable where Body: Sendable {
    let title: String
    let nav: Navigation?
    let body: Body
}

/// The header's links: an app's pages, and the apps page for the admin. Each `in…` flag marks the current section
/// (stored, as Mustache reads stored properties only).
struct Navigation: Sendable {
    enum Section: Sendable { case overview, channels, activities, pushes, events, webhooks, schedules, compose, audit, apps, people, account }

    /// The app's pages, `/console/app/<key>`; `nil` on the admin's apps pages.
    let base: String?
    let appName: String?
    let isAdmin: Bool
    let csrf: String
    let inOverview: Bool
    let inChannels: Bool
    let inActivities: Bool
    let inPushes: Bool
    let inEvents: Bool
    let inWebhooks: Bool
    let inSchedules: Bool
    let inCompose: Bool
    let inAudit: Bool
    let inApps: Bool
    let inPeople: Bool
    /// Whether the person may send, schedule and cancel in this app (pages hide those forms otherwise).
    let maySend: Bool
    /// Whether the person may manage this app's credentials, tokens and people.
    let mayAdminister: Bool
    /// The signed-in account's email, linking to its own page; `nil` for the master secret and the admin.
    let accountEmail: String?

    init(_ scope: AppScope, _ section: Section) {
        self.init(user: scope.user, app: scope.app.appKey, appName: scope.app.name, section, role: scope.role)
    }

    init(user: SignedIn, app: String?, appName: String?, _ section: Section, role: ConsoleRole? = nil) {
        self.maySend = role?.maySend ?? user.session.isAdmin
        self.mayAdminister = role?.mayAdminister ?? user.session.isAdmin
        self.accountEmail = user.session.account?.email
        self.base = app.map { "/console/app/\($0)" }
        self.appName = appName
        self.isAdmin = user.session.isAdmin
        self.csrf = user.session.csrfToken
        self.inOverview = section == .overview
        self.inChannels = section == .channels
        self.inActivities = section == .activities
        self.inPushes = section == .pushes
        self.inEvents = section == .events
        self.inWebhooks = section == .webhooks
        self.inSchedules = section == .schedules
        self.inCompose = section == .compose
        self.inAudit = section == .audit
        self.inApps = section == .apps
        self.inPeople = section == .people
    }
}
