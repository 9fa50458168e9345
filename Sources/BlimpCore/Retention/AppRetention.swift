/// An app's own retentions, each `nil` where the app keeps the deployment's (``RetentionPolicy``): stored in
/// `apps.retention_pushes_seconds`, `retention_outcomes_seconds`, `retention_audit_seconds` and
/// `retention_events_seconds`.
public struct AppRetention: Sendable, Equatable {
    /// The settings the app overrides.
    private var overrides: [RetentionPolicy.Setting: Duration] = [:]

    public init(pushes: Duration? = nil, outcomes: Duration? = nil, audit: Duration? = nil, events: Duration? = nil) {
        self.pushes = pushes
        self.outcomes = outcomes
        self.audit = audit
        self.events = events
    }

    /// The override of `setting`, if any.
    public subscript(setting: RetentionPolicy.Setting) -> Duration? {
        get { self.overrides[setting] }
        set { self.overrides[setting] = newValue }
    }

    public var pushes: Duration? {
        get { self[.pushes] }
        set { self[.pushes] = newValue }
    }

    public var outcomes: Duration? {
        get { self[.outcomes] }
        set { self[.outcomes] = newValue }
    }

    public var audit: Duration? {
        get { self[.audit] }
        set { self[.audit] = newValue }
    }

    public var events: Duration? {
        get { self[.events] }
        set { self[.events] = newValue }
    }

    /// Whether the app keeps every one of the deployment's retentions.
    public var isEmpty: Bool { self.overrides.isEmpty }
}
