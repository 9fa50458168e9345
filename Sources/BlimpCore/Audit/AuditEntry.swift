import Foundation

/// Who acted and from where: what every entry a request (or a command) records shares.
public struct AuditOrigin: Sendable, Equatable {
    public var actor: AuditActor
    /// The client's address (the API's, proxy-aware); `nil` at the command line.
    public var address: String?

    public init(actor: AuditActor, address: String?) {
        self.actor = actor
        self.address = address
    }

    /// The command line's origin: `blimp …` run by an operator.
    public static let commandLine = AuditOrigin(actor: .commandLine, address: nil)

    /// An entry by this origin.
    public func entry(appID: Int64?, _ action: AuditAction, subject: String? = nil, details: RawJSON? = nil) -> AuditEntry {
        AuditEntry(appID: appID, actor: self.actor, address: self.address, action: action, subject: subject, details: details)
    }

    /// A `credential.changed` entry by this origin; `details` may name more (a token's name and id), never a secret.
    public func credentialChanged(appID: Int64?, _ credential: AuditCredential, details: RawJSON? = nil) -> AuditEntry {
        self.entry(appID: appID, .credentialChanged, subject: credential.rawValue, details: details)
    }
}

/// One thing to record in the audit trail: in which app (`nil`: the deployment), who, from where, what and on what.
/// The time is the store's. Nothing here may be a secret.
public struct AuditEntry: Sendable, Equatable {
    /// The app; `nil` for a deployment-level entry.
    public var appID: Int64?
    public var actor: AuditActor
    public var address: String?
    public var action: AuditAction
    /// What was acted on (see ``AuditAction``).
    public var subject: String?
    /// More facts, as a JSON object.
    public var details: RawJSON?

    public init(appID: Int64?, actor: AuditActor, address: String?, action: AuditAction, subject: String? = nil, details: RawJSON? = nil) {
        self.appID = appID
        self.actor = actor
        self.address = address
        self.action = action
        self.subject = subject
        self.details = details
    }
}

/// An entry as recorded: its id (the order entries were recorded in), its time and the entry.
public struct AuditRecord: Sendable, Equatable {
    public var id: Int64
    public var at: Date
    public var entry: AuditEntry

    public init(id: Int64, at: Date, entry: AuditEntry) {
        self.id = id
        self.at = at
        self.entry = entry
    }
}
