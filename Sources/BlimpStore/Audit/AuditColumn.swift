import BlimpCore
import Foundation
import PostgresNIO

/// The `audit_events` row as ``AuditLog`` writes it, described once: each case a column, its type in the insert's
/// JSON record and its value for one entry.
enum AuditColumn: String, RecordColumn {
    case appID = "app_id"
    case at
    case actorKind = "actor_kind"
    case actorAccountID = "actor_account_id"
    case actorLabel = "actor_label"
    case actorTokenID = "actor_token_id"
    case address
    case action
    case subject
    case details

    var recordType: String {
        switch self {
        case .appID, .at, .actorAccountID: "bigint"
        case .actorTokenID: "uuid"
        case .details: "jsonb"
        case .actorKind, .actorLabel, .address, .action, .subject: "text"
        }
    }

    var valueExpression: String {
        switch self {
        case .at: RecordTime.expression("r.at")
        default: "r.\(self.rawValue)"
        }
    }

    /// The column's value for `entry`, recorded at `at`; `nil` is NULL.
    func value(of entry: AuditEntry, at: Date) -> RawJSON? {
        switch self {
        case .appID: entry.appID.map(RawJSON.integer)
        case .at: RecordTime.value(at)
        case .actorKind: .string(entry.actor.kind.rawValue)
        case .actorAccountID: if case .account(let id, _) = entry.actor { .integer(id) } else { nil }
        case .actorLabel: entry.actor.label.map(RawJSON.string)
        case .actorTokenID: if case .apiToken(let id, _) = entry.actor { .string(id.lowercaseString) } else { nil }
        case .address: entry.address.map(RawJSON.string)
        case .action: .string(entry.action.rawValue)
        case .subject: entry.subject.map(RawJSON.string)
        case .details: entry.details
        }
    }

    /// A multi-row insert of `entries`, all recorded at `at`.
    static func insert(_ entries: [AuditEntry], at: Date) -> PostgresQuery {
        Self.insert(into: "audit_events", Self.records(entries, at: at))
    }

    /// The rows of `entries`, all recorded at `at`.
    static func records(_ entries: [AuditEntry], at: Date) -> [Record<AuditColumn>] {
        entries.map { entry in
            var record = Record<AuditColumn>()
            for column in Self.allCases { record.set(column, column.value(of: entry, at: at)) }
            return record
        }
    }

    /// What a listing reads of each row.
    enum Selected: String, SelectedColumn {
        case id, appID = "app_id", at, actorKind = "actor_kind", actorAccountID = "actor_account_id"
        case actorLabel = "actor_label", actorTokenID = "actor_token_id", address, action, subject, details

        var expression: String {
            switch self {
            case .details: "details::text"
            default: self.rawValue
            }
        }
    }
}
