import BlimpCore
import Foundation

/// `BLIMP_APNS_URL`, `BLIMP_APNS_CHANNELS_URL`, `BLIMP_APNS_BROADCAST_URL` and `BLIMP_APNS_CA_FILE`: where the
/// deployment's APNs traffic goes.
enum APNsEndpointSetting {
    /// The settings from the environment; a malformed URL or a missing CA file is a one-line error.
    static func resolve() throws -> APNsEndpointSettings {
        let environment = ProcessInfo.processInfo.environment
        let settings = try APNsEndpointSettings(
            overrideURL: environment["BLIMP_APNS_URL"],
            channelsURL: environment["BLIMP_APNS_CHANNELS_URL"],
            broadcastURL: environment["BLIMP_APNS_BROADCAST_URL"],
            caFile: environment["BLIMP_APNS_CA_FILE"]
        )
        if let caFile = settings.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw CLIError("BLIMP_APNS_CA_FILE names a file that cannot be read: \(caFile)")
        }
        return settings
    }
}

extension APNsEndpointSettings {
    /// Where APNs requests go, in words.
    var summary: String {
        var summary =
            if let url = self.overrideURL { "\(url.absoluteString) (BLIMP_APNS_URL), for every app" } else {
                "Apple: api.push.apple.com or api.sandbox.push.apple.com, by each app's environment"
            }
        if let url = self.channelsURL { summary += "; channel management \(url.absoluteString)" }
        if let url = self.broadcastURL { summary += "; broadcasts \(url.absoluteString)" }
        return summary
    }
}
