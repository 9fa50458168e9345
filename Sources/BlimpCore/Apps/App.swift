import Foundation

/// A stored app (tenant), without its secrets.
public struct App: Sendable, Equatable, Codable {
    /// The internal id every row of the app carries.
    public let id: Int64
    /// The public app key (Airship's `app_key`).
    public let appKey: String
    public let name: String
    public let bundleID: String
    public let apnsKeyID: String
    public let apnsTeamID: String
    public let apnsEnvironment: APNsEnvironment
    public let createdAt: Date

    public init(
        id: Int64,
        appKey: String,
        name: String,
        bundleID: String,
        apnsKeyID: String,
        apnsTeamID: String,
        apnsEnvironment: APNsEnvironment,
        createdAt: Date
    ) {
        self.id = id
        self.appKey = appKey
        self.name = name
        self.bundleID = bundleID
        self.apnsKeyID = apnsKeyID
        self.apnsTeamID = apnsTeamID
        self.apnsEnvironment = apnsEnvironment
        self.createdAt = createdAt
    }
}
