/// A value stored sealed under the server key, named as messages name it: by app key or secret name, never by
/// anything secret.
public enum SealedSecret: Sendable, Hashable, CustomStringConvertible {
    /// `apps.apns_key_sealed`: the app's `.p8` key.
    case apnsKey(appKey: String)
    /// `apps.app_secret_sealed`.
    case appSecret(appKey: String)
    /// `apps.previous_app_secret_sealed`, during an app secret's overlap.
    case previousAppSecret(appKey: String)
    /// A row of `deployment_secrets`.
    case deployment(name: String)
    /// `accounts.totp_secret_sealed`: a console account's TOTP secret.
    case totpSecret(email: String)
    /// `webhooks.secret_sealed`: a webhook endpoint's signing secret.
    case webhookSecret(id: String)
    /// `webhooks.previous_secret_sealed`, while a rotated secret still signs.
    case previousWebhookSecret(id: String)

    public var description: String {
        switch self {
        case .apnsKey(let appKey): "the APNs key of app \(appKey)"
        case .appSecret(let appKey): "the app secret of app \(appKey)"
        case .previousAppSecret(let appKey): "the previous app secret of app \(appKey)"
        case .deployment(let name): "the deployment secret \(name)"
        case .totpSecret(let email): "the TOTP secret of account \(email)"
        case .webhookSecret(let id): "the signing secret of webhook \(id)"
        case .previousWebhookSecret(let id): "the previous signing secret of webhook \(id)"
        }
    }

    /// What the value is bound to when sealed (AES-GCM's authenticated data), so that it opens nowhere else: its app
    /// key, or its name in `deployment_secrets`.
    var context: String {
        switch self {
        case .apnsKey(let appKey), .appSecret(let appKey), .previousAppSecret(let appKey): appKey
        case .deployment(let name): "deployment secret \(name)"
        case .totpSecret(let email): "account \(email)"
        case .webhookSecret(let id), .previousWebhookSecret(let id): "webhook \(id)"
        }
    }
}
