import BlimpCore

/// What authenticates an app's requests: its secrets' digests, and the app secret that keys the SDK's signatures.
public struct StoredCredentials: Sendable {
    public let app: App
    let appSecretDigest: SecretDigest
    let masterSecretDigest: SecretDigest
    /// The digests of the app's server API tokens (`blimp apps token create`).
    let apiTokenDigests: [SecretDigest]
    /// What checks the SDK's tokens signed with the app secret; `nil` for apps created before Blimp kept the secret,
    /// which can use Basic authentication only.
    public let signature: SDKSignature?
    /// Whether the SDK's identify call may associate a device's channel with a named user; when not, only the
    /// server API associates (`blimp apps update --device-association deny`).
    public let devicesMayAssociate: Bool

    /// Which secret authenticated a request, and so what it may do.
    public enum Role: Sendable, Equatable {
        /// The app secret: device-level APIs only.
        case device
        /// The master secret: the server APIs.
        case master
    }

    /// The role `secret` grants, or `nil` when it is neither secret. Digests are compared in constant time.
    public func role(of secret: String) -> Role? {
        if self.masterSecretDigest.matches(secret) { return .master }
        if self.appSecretDigest.matches(secret) { return .device }
        return nil
    }

    /// Whether `token` is one of the app's server API tokens, which act with the master secret's rights.
    public func isAPIToken(_ token: String) -> Bool {
        self.apiTokenDigests.contains { $0.matches(token) }
    }
}
