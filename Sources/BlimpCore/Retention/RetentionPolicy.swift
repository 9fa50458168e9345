import Foundation

/// How long Blimp keeps what grows with traffic before the janitor deletes it: finished pushes with their parts and
/// reports (counted from when the push finished), delivery outcomes with send tallies, audit entries, and the events
/// of the event stream. The deployment sets each (`BLIMP_RETENTION_PUSHES`, `BLIMP_RETENTION_OUTCOMES`,
/// `BLIMP_RETENTION_AUDIT`, `BLIMP_RETENTION_EVENTS`); an app may override each (``AppRetention``).
public struct RetentionPolicy: Sendable, Equatable {
    /// One of the retentions, with its floor, default and names.
    public enum Setting: String, Sendable, CaseIterable {
        case pushes, outcomes, audit, events

        /// The environment variable that sets it for the deployment.
        public var environmentName: String {
            switch self {
            case .pushes: "BLIMP_RETENTION_PUSHES"
            case .outcomes: "BLIMP_RETENTION_OUTCOMES"
            case .audit: "BLIMP_RETENTION_AUDIT"
            case .events: "BLIMP_RETENTION_EVENTS"
            }
        }

        /// The shortest retention allowed (whole hours), and why: pushes back idempotency keys for 24 hours, a token's outcomes
        /// of the last hour count against its priority budget, and a stream's reader resumes from its offset after a day
        /// away.
        public var floor: (duration: Duration, reason: String)? {
            switch self {
            case .pushes: (.seconds(24 * 3600), "idempotency keys answer for 24h")
            case .outcomes: (.seconds(3600), "priority budgets count the last hour's outcomes")
            case .audit: nil
            case .events: (.seconds(24 * 3600), "event stream readers resume from their offset after a day away")
            }
        }

        /// The deployment's default: 30 days of pushes, 7 of outcomes, a year of audit entries, 7 days of events (as
        /// Airship keeps its stream's).
        public var defaultDuration: Duration {
            switch self {
            case .pushes: .seconds(30 * 86400)
            case .outcomes: .seconds(7 * 86400)
            case .audit: .seconds(365 * 86400)
            case .events: .seconds(7 * 86400)
            }
        }
    }

    /// The longest retention any setting takes: ten years.
    public static let ceiling: Duration = .seconds(3650 * 86400)

    public var pushes: Duration
    public var outcomes: Duration
    public var audit: Duration
    public var events: Duration

    /// Each setting's default.
    public init(
        pushes: Duration = Setting.pushes.defaultDuration, outcomes: Duration = Setting.outcomes.defaultDuration,
        audit: Duration = Setting.audit.defaultDuration, events: Duration = Setting.events.defaultDuration
    ) {
        self.pushes = pushes
        self.outcomes = outcomes
        self.audit = audit
        self.events = events
    }

    /// The retention of `setting`.
    public subscript(setting: Setting) -> Duration {
        get {
            switch setting {
            case .pushes: self.pushes
            case .outcomes: self.outcomes
            case .audit: self.audit
            case .events: self.events
            }
        }
        set {
            switch setting {
            case .pushes: self.pushes = newValue
            case .outcomes: self.outcomes = newValue
            case .audit: self.audit = newValue
            case .events: self.events = newValue
            }
        }
    }

    /// This policy with an app's overrides applied.
    public func applying(_ app: AppRetention) -> RetentionPolicy {
        var policy = self
        for setting in Setting.allCases {
            if let override = app[setting] { policy[setting] = override }
        }
        return policy
    }

    /// What `setting` keeps at `now`, as the instants older rows are deleted before: `default` for apps that keep this
    /// policy's retention, `apps` for each app in `overrides` whose own retention differs from it.
    public func cutoffs(_ setting: Setting, apps overrides: [Int64: AppRetention], now: Date) -> (default: Date, apps: [Int64: Date]) {
        func cutoff(_ retention: Duration) -> Date { now.addingTimeInterval(-TimeInterval(retention.components.seconds)) }
        var apps: [Int64: Date] = [:]
        for (appID, app) in overrides {
            if let own = app[setting], own != self[setting] { apps[appID] = cutoff(own) }
        }
        return (cutoff(self[setting]), apps)
    }
}

extension RetentionPolicy {
    /// The units a retention is written in.
    private static let units: [(suffix: Character, seconds: Int64)] = [("d", 86400), ("h", 3600), ("m", 60), ("s", 1)]

    /// A retention written as a whole number and a unit, `90s`, `15m`, `12h` or `30d`, checked against `setting`'s
    /// floor and the ``ceiling``. What is refused is an ``InvalidRetention`` naming the setting and the rule.
    public static func parse(_ text: String, for setting: Setting) throws(InvalidRetention) -> Duration {
        guard let duration = Self.duration(text) else {
            throw InvalidRetention(setting: setting, value: text, rule: "is not a duration: write a whole number and a unit, like 90s, 15m, 12h or 30d")
        }
        try Self.check(duration, for: setting, written: text)
        return duration
    }

    /// A whole number and a unit, `90s`, `15m`, `12h` or `30d`, as a duration; `nil` for any other text.
    public static func duration(_ text: String) -> Duration? {
        let unit = text.last.flatMap { last in Self.units.first { $0.suffix == last } }
        let digits = text.dropLast()
        guard let unit, !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int64(digits) else {
            return nil
        }
        return .seconds(number * unit.seconds)
    }

    /// Checks a retention given in seconds (a stored override) as ``parse(_:for:)`` checks a written one.
    public static func check(seconds: Int64, for setting: Setting) throws(InvalidRetention) -> Duration {
        guard seconds <= Self.ceiling.components.seconds else {
            throw InvalidRetention(setting: setting, value: "\(seconds)s", rule: "is above the ceiling of \(Self.format(Self.ceiling))")
        }
        let duration = Duration.seconds(seconds)
        try Self.check(duration, for: setting, written: "\(seconds)s")
        return duration
    }

    private static func check(_ duration: Duration, for setting: Setting, written text: String) throws(InvalidRetention) {
        guard duration > .zero else { throw InvalidRetention(setting: setting, value: text, rule: "must be more than 0") }
        if let floor = setting.floor, duration < floor.duration {
            throw InvalidRetention(setting: setting, value: text, rule: "is below the floor of \(floor.duration.components.seconds / 3600)h (\(floor.reason))")
        }
        guard duration <= Self.ceiling else {
            throw InvalidRetention(setting: setting, value: text, rule: "is above the ceiling of \(Self.format(Self.ceiling))")
        }
    }

    /// A retention in the largest unit that writes it whole: `30d`, `36h`, `90m`, `45s`.
    public static func format(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        let unit = Self.units.first { seconds % $0.seconds == 0 } ?? ("s", 1)
        return "\(seconds / unit.seconds)\(unit.suffix)"
    }
}

/// A retention that was refused: which setting, what was given, and the rule it broke.
public struct InvalidRetention: Error, Equatable, CustomStringConvertible {
    public let setting: RetentionPolicy.Setting
    public let value: String
    public let rule: String

    public var description: String { "the \(self.setting.rawValue) retention '\(self.value)' \(self.rule)" }
}
