import Foundation

/// Which entries of the audit trail a reader asks for: by actor (its kind, or the label people know it by: an email,
/// a token's name), action and time, each optional. The API's query parameters and the console's filter form are read
/// by ``parse(actor:kind:action:since:until:)`` alike.
public struct AuditFilter: Sendable, Equatable {
    public var kind: AuditActor.Kind?
    public var label: String?
    public var action: AuditAction?
    /// Entries at or after this instant.
    public var since: Date?
    /// Entries before this instant.
    public var until: Date?

    public init(kind: AuditActor.Kind? = nil, label: String? = nil, action: AuditAction? = nil, since: Date? = nil, until: Date? = nil) {
        self.kind = kind
        self.label = label
        self.action = action
        self.since = since
        self.until = until
    }

    /// The filter from its text forms (empty or absent: no filter); an error names the field. `actor` is a kind
    /// (`master_secret`, `api_token`…) or an email or token name; `kind` is a kind only.
    public static func parse(
        actor: String?, kind: String? = nil, action: String?, since: String?, until: String?
    ) throws(InvalidField) -> AuditFilter {
        var filter = AuditFilter()
        if let actor = actor.flatMap(Self.given) {
            if let kind = AuditActor.Kind(rawValue: actor) {
                filter.kind = kind
            } else {
                filter.label = try TextLimit.audit.check(actor, at: "actor", "an actor")
            }
        }
        if let kind = kind.flatMap(Self.given) {
            guard let known = AuditActor.Kind(rawValue: kind) else {
                throw InvalidField("kind", "kind is one of \(AuditActor.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            filter.kind = known
        }
        if let action = action.flatMap(Self.given) {
            guard let known = AuditAction(rawValue: action) else {
                throw InvalidField("action", "action is one of \(AuditAction.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            filter.action = known
        }
        if let since = since.flatMap(Self.given) { filter.since = try Self.date(since, "since") }
        if let until = until.flatMap(Self.given) { filter.until = try Self.date(until, "until") }
        if let since = filter.since, let until = filter.until, until <= since {
            throw InvalidField("until", "until must be after since")
        }
        return filter
    }

    private static func given(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// An ISO 8601 date-time: UTC in Airship's form (with or without `Z` and a fraction), or with an offset.
    private static func date(_ text: String, _ field: String) throws(InvalidField) -> Date {
        if let date = AirshipDate.parse(text) { return date }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        if let date = formatter.date(from: text) { return date }
        throw InvalidField(field, "\(field) is an ISO 8601 date-time such as 2026-11-26T20:00:00Z")
    }
}

extension TextLimit {
    /// What the audit trail keeps of a label or a subject from outside (an email, a name): at most 256 characters,
    /// 1,024 bytes.
    public static let audit = TextLimit(characters: 1...256, bytes: 1024)
}
