/// What a person may do in one app's console, each role including the ones below it.
public enum ConsoleRole: String, Sendable, CaseIterable, Comparable {
    /// Reads every page of the app.
    case viewer
    /// Also composes, sends, schedules and cancels pushes.
    case sender
    /// Also manages the app's credentials, API tokens and accounts.
    case admin

    /// The role named `name`, or ``AccountRuleError/unknownRole(_:)``.
    public init(named name: String) throws(AccountRuleError) {
        guard let role = ConsoleRole(rawValue: name) else { throw .unknownRole(name) }
        self = role
    }

    /// Whether the role may send, schedule and cancel pushes.
    public var maySend: Bool { self >= .sender }
    /// Whether the role may manage the app's credentials, tokens and accounts.
    public var mayAdminister: Bool { self >= .admin }

    private var rank: Int {
        switch self {
        case .viewer: 0
        case .sender: 1
        case .admin: 2
        }
    }

    public static func < (lhs: ConsoleRole, rhs: ConsoleRole) -> Bool { lhs.rank < rhs.rank }
}
