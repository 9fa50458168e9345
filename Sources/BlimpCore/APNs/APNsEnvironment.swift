import Foundation

/// Which APNs service an app's tokens belong to.
///
/// Apple keeps production and sandbox tokens apart: a sandbox token sent to the production host is rejected,
/// and connections must never be shared between the two (reference: apns-live-activities.md §1.1, §2.3).
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    case sandbox
    case production

    /// Apple's host for this environment.
    public var appleBaseURL: URL {
        switch self {
        case .production: URL(string: "https://api.push.apple.com")!
        case .sandbox: URL(string: "https://api.sandbox.push.apple.com")!
        }
    }
}
