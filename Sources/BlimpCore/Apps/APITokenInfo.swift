import Foundation

/// One of an app's server API tokens as it is shown: its name and when it was issued. The token itself is stored only
/// as a digest, so it is never shown again.
public struct APITokenInfo: Sendable, Equatable, Codable {
    /// The name it was issued under, unique in the app, to revoke it by.
    public let name: String
    public let createdAt: Date

    public init(name: String, createdAt: Date) {
        self.name = name
        self.createdAt = createdAt
    }
}
