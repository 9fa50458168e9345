import BlimpCore
import Hummingbird

/// How the console admits people.
public struct ConsoleConfiguration: Sendable {
    /// The deployment admin's token (`BLIMP_ADMIN_TOKEN`): every app, and app management. `nil` turns admin sign-in
    /// off.
    public var adminToken: String?
    /// Whether an app's master secret signs in to the console (`BLIMP_CONSOLE_MASTER_SECRET_SIGN_IN`, on unless
    /// `off`): accounts are better, as they name the person and carry a role.
    public var masterSecretSignIn: Bool
    /// Whether cookies are marked `Secure` (the public URL is https).
    public var secureCookies: Bool
    /// Sign-in attempts allowed per client address, and per email, across the deployment's replicas together: a
    /// burst, then one per ten seconds.
    public var signIns: RateLimit
    /// The client's address, as the API's limits read it (behind a trusted proxy, from its header).
    public var clientAddress: @Sendable (Request, any RequestContext) -> String

    public init(
        adminToken: String?, masterSecretSignIn: Bool = true, secureCookies: Bool, signIns: RateLimit = RateLimit(perSecond: 0.1, burst: 10),
        clientAddress: @escaping @Sendable (Request, any RequestContext) -> String
    ) {
        self.adminToken = adminToken
        self.masterSecretSignIn = masterSecretSignIn
        self.secureCookies = secureCookies
        self.signIns = signIns
        self.clientAddress = clientAddress
    }
}
