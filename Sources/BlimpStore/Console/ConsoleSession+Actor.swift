import BlimpCore

extension ConsoleSession {
    /// Who the session acts as in the audit trail: the deployment admin (signed in with `BLIMP_ADMIN_TOKEN`), or
    /// whoever signed in with the app's master secret.
    public var actor: AuditActor {
        self.appID == nil ? .adminToken : .masterSecret
    }
}
