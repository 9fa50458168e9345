/// What the audit trail records, a closed set (the schema's CHECK holds the same words). Each entry's `subject`
/// names what was acted on; the comments say what it is.
public enum AuditAction: String, Sendable, CaseIterable {
    /// A push queued (API or console); subject: the push id.
    case pushAccepted = "push.accepted"
    /// A push cancelled; subject: the push id.
    case pushCancelled = "push.cancelled"
    /// A failed push tried again; subject: the push id.
    case pushRetried = "push.retried"
    /// Subject of the schedule actions: the schedule id.
    case scheduleCreated = "schedule.created"
    case scheduleChanged = "schedule.changed"
    case schedulePaused = "schedule.paused"
    case scheduleResumed = "schedule.resumed"
    case scheduleCancelled = "schedule.cancelled"
    /// A Live Activity type declared or replaced; subject: its `attributes_type`.
    case liveActivityTypeSaved = "live_activity_type.saved"
    case liveActivityTypeDeleted = "live_activity_type.deleted"
    /// A live activity broadcast channel; subject: the Live Activity name it backs.
    case broadcastChannelCreated = "broadcast_channel.created"
    case broadcastChannelDeleted = "broadcast_channel.deleted"
    /// A webhook endpoint created, deleted, enabled again or given a new secret; subject: its id.
    case webhookCreated = "webhook.created"
    case webhookDeleted = "webhook.deleted"
    case webhookEnabled = "webhook.enabled"
    case webhookRotated = "webhook.rotated"
    /// A credential changed; subject: its kind (``AuditCredential``).
    case credentialChanged = "credential.changed"
    /// An app created (`blimp apps create`), or its settings changed; subject: the app key.
    case appCreated = "app.created"
    case appChanged = "app.changed"
    /// Subject of the account actions: the account's email.
    case accountCreated = "account.created"
    case accountRemoved = "account.removed"
    case accountRoleChanged = "account.role_changed"
    case accountPasswordChanged = "account.password_changed"
    case accountTOTPChanged = "account.totp_changed"
    /// A console sign-in, and one refused; subject: the email submitted, if any.
    case signIn = "sign_in"
    case signInFailed = "sign_in_failed"
    case signOut = "sign_out"
}

/// The credential a `credential.changed` entry names (its subject).
public enum AuditCredential: String, Sendable, CaseIterable {
    case masterSecret = "master_secret"
    case appSecret = "app_secret"
    case apnsKey = "apns_key"
    case apiTokenIssued = "api_token_issued"
    case apiTokenRevoked = "api_token_revoked"
    case serverKey = "server_key"
}
