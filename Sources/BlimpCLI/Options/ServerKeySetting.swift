import BlimpCore
import Foundation

/// The server key for secrets at rest, from `BLIMP_SECRET_KEY`, with `BLIMP_PREVIOUS_SECRET_KEY` during a rotation
/// (never flags: flags show in process lists).
enum ServerKeySetting {
    static let environmentName = "BLIMP_SECRET_KEY"
    static let previousEnvironmentName = "BLIMP_PREVIOUS_SECRET_KEY"

    /// The configured key; a missing or malformed one is a one-line error.
    static func resolve() throws -> ServerKey {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment[Self.environmentName], !text.isEmpty else {
            throw CLIError("\(Self.environmentName) is not set (make one with: blimp secret-key generate)")
        }
        return try ServerKey(base64: text, previousBase64: environment[Self.previousEnvironmentName].flatMap { $0.isEmpty ? nil : $0 })
    }
}
