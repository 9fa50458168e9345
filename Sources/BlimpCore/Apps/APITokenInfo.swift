import Foundation

/// One of an app's server API tokens as it is shown: its name and when it was issued. The token itself is stored only
/// as a digest, so it is never shown again.
public struct APITokenInfo: Sendable, Equatable, Codable {
    /// The token's stable id, which the audit trail names it by beside its name.
    public let id: UUID
    /// The name it was issued under, unique in the app, to revoke it by.
    public let name: String
    public let createdAt: Date

    public init(id: UUID, name: String, createdAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }
}
