/// What a push sends: Live Activity events, or an alert (or background) notification. The schema's CHECK on
/// `pushes.kind` holds the same words.
public enum PushKind: String, Sendable, CaseIterable {
    case liveActivity = "live_activity"
    case alert
}

extension Push {
    /// What the push sends.
    public var kind: PushKind {
        switch self.content {
        case .liveActivity: .liveActivity
        case .alert: .alert
        }
    }
}
