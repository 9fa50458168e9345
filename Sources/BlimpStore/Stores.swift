import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// One of each store a serving process uses, over one client and with one set of settings. The composition root
/// builds it once and hands it to the API and the console alike, so the process has one ``PushIntake``, one
/// ``PushPreparationInputs`` and one ``ChannelStore`` (one of each coalescer: they gather every request and cap the
/// statements in flight process-wide), and no store ignores a setting another honours.
public struct Stores: Sendable {
    /// The client every store here uses (the API's readiness check queries it).
    public let client: Database
    public let apps: AppStore
    public let nonces: NonceLedger
    public let secrets: DeploymentSecrets
    public let channels: ChannelStore
    public let namedUsers: NamedUserStore
    public let intake: PushIntake
    public let reports: PushReports
    public let control: PushControl
    public let dispatch: DispatchStore
    public let console: ConsoleStore
    public let sessions: ConsoleSessions
    public let accounts: AccountStore
    public let liveActivityChannels: LiveActivityChannelStore
    public let schedules: ScheduleStore
    public let liveActivityTypes: LiveActivityTypeStore
    /// What every path accepting pushes reads to prepare them, one read gathering concurrent requests.
    public let preparationInputs: PushPreparationInputs
    public let audit: AuditLog
    /// The apps' event streams.
    public let events: EventLog
    public let webhooks: WebhookStore
    /// The deployment's rate-limit buckets, which every ``SharedRateLimiter`` of the process takes from together.
    public let rateBuckets: RateBuckets

    /// The deployment's retentions (apps may override them): what reports, the console and the janitor go by.
    public let retention: RetentionPolicy

    /// With `preparedStatements` (not through a transaction pooler), the writes every device makes, the push intake's
    /// insert and locks and a worker's claim are prepared once per connection; `now` is the clock for lifetimes and
    /// acceptance times (tests inject their own).
    public init(
        client: Database, logger: Logger, preparedStatements: Bool = true, retention: RetentionPolicy = RetentionPolicy(),
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.client = client
        self.retention = retention
        self.apps = AppStore(client: client, logger: logger, now: now)
        self.nonces = NonceLedger(client: client, logger: logger)
        self.secrets = DeploymentSecrets(client: client, logger: logger)
        self.channels = ChannelStore(client: client, logger: logger, preparedStatements: preparedStatements, now: now)
        self.namedUsers = NamedUserStore(channels: self.channels)
        self.intake = PushIntake(client: client, logger: logger, preparedStatements: preparedStatements, now: now)
        self.reports = PushReports(client: client, logger: logger, retention: retention.pushes, now: now)
        self.control = PushControl(client: client, logger: logger, now: now)
        self.dispatch = DispatchStore(client: client, logger: logger, preparedStatements: preparedStatements)
        self.console = ConsoleStore(client: client, logger: logger)
        self.sessions = ConsoleSessions(client: client, logger: logger)
        self.accounts = AccountStore(client: client, logger: logger, now: now)
        self.liveActivityChannels = LiveActivityChannelStore(client: client, logger: logger)
        self.schedules = ScheduleStore(client: client, logger: logger)
        self.liveActivityTypes = LiveActivityTypeStore(client: client, logger: logger)
        self.preparationInputs = PushPreparationInputs(channels: self.liveActivityChannels, types: self.liveActivityTypes)
        self.audit = AuditLog(client: client, logger: logger, now: now)
        self.events = EventLog(client: client, logger: logger)
        self.webhooks = WebhookStore(client: client, logger: logger)
        self.rateBuckets = RateBuckets(client: client, logger: logger)
    }
}
