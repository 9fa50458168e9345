/// An app's own retentions, each `nil` where the app keeps the deployment's (``RetentionPolicy``): stored in
/// `apps.retention_pushes_seconds`, `retention_outcomes_seconds` and `retention_audit_seconds`.
public struct AppRetention: Sendable, Equatable {
    public var pushes: Duration?
    public var outcomes: Duration?
    public var audit: Duration?

    public init(pushes: Duration? = nil, outcomes: Duration? = nil, audit: Duration? = nil) {
        self.pushes = pushes
        self.outcomes = outcomes
        self.audit = audit
    }

    /// The override of `setting`, if any.
    public subscript(setting: RetentionPolicy.Setting) -> Duration? {
        get {
            switch setting {
            case .pushes: self.pushes
            case .outcomes: self.outcomes
            case .audit: self.audit
            }
        }
        set {
            switch setting {
            case .pushes: self.pushes = newValue
            case .outcomes: self.outcomes = newValue
            case .audit: self.audit = newValue
            }
        }
    }

    /// Whether the app keeps every one of the deployment's retentions.
    public var isEmpty: Bool { RetentionPolicy.Setting.allCases.allSatisfy { self[$0] == nil } }
}
