import Foundation

/// Which APNs service an app's tokens belong to.
///
/// Apple keeps production and sandbox tokens apart: a sandbox token sent to the production host is rejected,
/// and connections must never be shared between the two (docs/references.md#apns-hosts; https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
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

    /// Apple's channel-management host for this environment, on its own port (see
    /// https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
    public var appleChannelsBaseURL: URL {
        switch self {
        case .production: URL(string: "https://api-manage-broadcast.push.apple.com:2196")!
        case .sandbox: URL(string: "https://api-manage-broadcast.sandbox.push.apple.com:2195")!
        }
    }

    /// Apple's broadcast-publish host for this environment: the device-push host on 443, as Apple's prose and
    /// command-line page say. Unverified: Apple's HEADERS samples show `api-broadcast[.sandbox].push.apple.com`
    /// instead (docs/references.md#broadcast-publish-host), so `BLIMP_APNS_BROADCAST_URL` can name that one.
    public var appleBroadcastBaseURL: URL { self.appleBaseURL }
}
