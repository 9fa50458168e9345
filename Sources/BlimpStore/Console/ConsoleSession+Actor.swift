import BlimpCore

extension ConsoleSession {
    /// Who the session acts as in the audit trail: the person signed in with their account, the deployment admin
    /// (signed in with `BLIMP_ADMIN_TOKEN`), or whoever signed in with the app's master secret.
    public var actor: AuditActor {
        if let account = self.account { return .account(id: account.id, email: account.email) }
        return self.appID == nil ? .adminToken : .masterSecret
    }
}
