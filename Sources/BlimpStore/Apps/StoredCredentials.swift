import BlimpCore
import Foundation

/// What authenticates an app's requests: its secrets' digests, and the app secret that keys the SDK's signatures.
public struct StoredCredentials: Sendable {
    public let app: App
    let appSecretDigest: SecretDigest
    let masterSecretDigest: SecretDigest
    /// The app's server API tokens (`blimp apps token create`), as digests.
    let apiTokens: [APITokenDigest]
    /// What checks the SDK's tokens signed with the app secret; `nil` for apps created before Blimp kept the secret,
    /// which can use Basic authentication only.
    public let signature: SDKSignature?
    /// The app secret before the last rotation, while its overlap lasts (`AppStore.rotateAppSecret`).
    let previousAppSecret: PreviousAppSecret?
    /// Whether the SDK's identify call may associate a device's channel with a named user; when not, only the
    /// server API associates (`blimp apps update --device-association deny`).
    public let devicesMayAssociate: Bool

    /// An app secret replaced by a rotation, still accepted until `expiresAt` so that installed apps can update.
    struct PreviousAppSecret: Sendable {
        let digest: SecretDigest
        /// `nil` when the previous secret was never kept sealed (an app from before Blimp kept it): Basic only.
        let signature: SDKSignature?
        let expiresAt: Date
    }

    /// Which secret authenticated a request, and so what it may do.
    public enum Role: Sendable, Equatable {
        /// The app secret: device-level APIs only.
        case device
        /// The master secret: the server APIs.
        case master
    }

    /// Until when the app secret replaced by the last rotation is still accepted, if it ever was; a date in the past
    /// means it no longer is.
    public var previousAppSecretExpiresAt: Date? { self.previousAppSecret?.expiresAt }

    /// The role `secret` grants at `now` (the API passes its request clock), or `nil` when it is none of the app's
    /// secrets (or the previous app secret, after its overlap). Digests are compared in constant time.
    public func role(of secret: String, at now: Date = Date()) -> Role? {
        if self.masterSecretDigest.matches(secret) { return .master }
        if self.appSecretDigest.matches(secret) { return .device }
        if let previous = self.previousAppSecret(at: now), previous.digest.matches(secret) { return .device }
        return nil
    }

    /// What checks the SDK's signed tokens at `now`: the app secret's signature, and the previous app secret's while
    /// its overlap lasts; empty when the app has neither sealed.
    public func signatures(at now: Date) -> [SDKSignature] {
        [self.signature, self.previousAppSecret(at: now)?.signature].compactMap { $0 }
    }

    /// Whether `token` is one of the app's server API tokens, which act with the master secret's rights.
    public func isAPIToken(_ token: String) -> Bool {
        self.apiToken(token) != nil
    }

    /// The server API token `token` is, as the audit trail names it (its stable id and name), or `nil`.
    public func apiToken(_ token: String) -> AuditActor? {
        self.apiTokens.first { $0.digest.matches(token) }.map { .apiToken(id: $0.id, name: $0.name) }
    }

    /// A server API token as stored: its digest, stable id and name.
    struct APITokenDigest: Sendable {
        let digest: SecretDigest
        let id: UUID
        let name: String

        /// Reads `<digest in base64> <id> <name>` (``AppColumn/apiTokens``).
        init?(_ text: String) {
            let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let digest = Data(base64Encoded: String(parts[0])), let id = UUID(parsing: String(parts[1])) else {
                return nil
            }
            self.digest = SecretDigest(bytes: Array(digest))
            self.id = id
            self.name = String(parts[2])
        }
    }

    /// The previous app secret if it is still accepted at `now`.
    private func previousAppSecret(at now: Date) -> PreviousAppSecret? {
        guard let previous = self.previousAppSecret, now < previous.expiresAt else { return nil }
        return previous
    }
}
