import Foundation

/// Who did something the audit trail records. Never a secret: a token is named by its name and stable id, a person by
/// their account and email.
public enum AuditActor: Sendable, Equatable, Hashable {
    /// A person signed in to the console with their account.
    case account(id: Int64, email: String)
    /// A server API token (`blimp apps token create`), by its stable id and the name it was issued under.
    case apiToken(id: UUID, name: String)
    /// Whoever holds the app's master secret (the API's Basic authentication, or the console's sign-in with it).
    case masterSecret
    /// The deployment admin, signed in to the console with `BLIMP_ADMIN_TOKEN`.
    case adminToken
    /// An operator running `blimp …` at the shell (with the database's credentials).
    case commandLine
    /// Whoever submitted this email at the console's sign-in and was refused: a claim, not a proved account.
    case claimedEmail(String)

    /// The actor's kind, as stored and filtered by. The schema's CHECK holds the same words.
    public enum Kind: String, Sendable, CaseIterable {
        case account
        case apiToken = "api_token"
        case masterSecret = "master_secret"
        case adminToken = "admin_token"
        case commandLine = "command_line"
        case claimedEmail = "claimed_email"
    }

    public var kind: Kind {
        switch self {
        case .account: .account
        case .apiToken: .apiToken
        case .masterSecret: .masterSecret
        case .adminToken: .adminToken
        case .commandLine: .commandLine
        case .claimedEmail: .claimedEmail
        }
    }

    /// What people know the actor by: an account's or a claimed email, a token's name; `nil` for the others (their kind says it).
    public var label: String? {
        switch self {
        case .account(_, let email): email
        case .apiToken(_, let name): name
        case .claimedEmail(let email): email
        case .masterSecret, .adminToken, .commandLine: nil
        }
    }

    /// The actor from its stored parts, or `nil` when they do not fit together.
    public init?(kind: Kind, accountID: Int64?, label: String?, tokenID: UUID?) {
        switch kind {
        case .account:
            guard let accountID, let label else { return nil }
            self = .account(id: accountID, email: label)
        case .apiToken:
            guard let tokenID, let label else { return nil }
            self = .apiToken(id: tokenID, name: label)
        case .masterSecret: self = .masterSecret
        case .adminToken: self = .adminToken
        case .commandLine: self = .commandLine
        case .claimedEmail:
            guard let label else { return nil }
            self = .claimedEmail(label)
        }
    }
}
