import BlimpCore
import Hummingbird

/// How the console admits people.
public struct ConsoleConfiguration: Sendable {
    /// The deployment admin's token (`BLIMP_ADMIN_TOKEN`): every app, and app management. `nil` turns admin sign-in
    /// off.
    public var adminToken: String?
    /// Whether cookies are marked `Secure` (the public URL is https).
    public var secureCookies: Bool
    /// Sign-in attempts allowed per client address: a burst, then one per ten seconds.
    public var signIns: RateLimit
    /// The client's address, as the API's limits read it (behind a trusted proxy, from its header).
    public var clientAddress: @Sendable (Request, any RequestContext) -> String

    public init(
        adminToken: String?, secureCookies: Bool, signIns: RateLimit = RateLimit(perSecond: 0.1, burst: 10),
        clientAddress: @escaping @Sendable (Request, any RequestContext) -> String
    ) {
        self.adminToken = adminToken
        self.secureCookies = secureCookies
        self.signIns = signIns
        self.clientAddress = clientAddress
    }
}
