import BlimpCore

/// How the console admits people.
public struct ConsoleConfiguration: Sendable {
    /// The deployment admin's token (`BLIMP_ADMIN_TOKEN`): every app, and app management. `nil` turns admin sign-in
    /// off.
    public var adminToken: String?
    /// Whether cookies are marked `Secure` (the public URL is https).
    public var secureCookies: Bool
    /// Failed sign-ins allowed per client address: a burst, then one per ten seconds.
    public var failedLogins: RateLimit

    public init(adminToken: String?, secureCookies: Bool, failedLogins: RateLimit = RateLimit(perSecond: 0.1, burst: 10)) {
        self.adminToken = adminToken
        self.secureCookies = secureCookies
        self.failedLogins = failedLogins
    }
}
