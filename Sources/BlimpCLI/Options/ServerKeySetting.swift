import BlimpCore
import Foundation

/// The server key for secrets at rest, from `BLIMP_SECRET_KEY` (never a flag: flags show in process lists).
enum ServerKeySetting {
    static let environmentName = "BLIMP_SECRET_KEY"

    /// The configured key; a missing or malformed one is a one-line error.
    static func resolve() throws -> ServerKey {
        guard let text = ProcessInfo.processInfo.environment[Self.environmentName], !text.isEmpty else {
            throw CLIError("\(Self.environmentName) is not set (make one with: openssl rand -base64 32)")
        }
        return try ServerKey(base64: text)
    }
}
