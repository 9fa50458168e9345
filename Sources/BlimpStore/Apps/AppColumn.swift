/// The `apps` columns the store reads, each by name, and which of them each read selects.
enum AppColumn: String, SelectedColumn {
    case id, appKey = "app_key", name, bundleID = "bundle_id", apnsKeyID = "apns_key_id", apnsTeamID = "apns_team_id"
    case apnsEnvironment = "apns_environment", createdAt = "created_at"
    case appSecretDigest = "app_secret_sha256", masterSecretDigest = "master_secret_sha256"
    case appSecretSealed = "app_secret_sealed", apiTokens = "api_tokens"
    case deviceAssociation = "device_association", previousAppSecretDigest = "previous_app_secret_sha256"
    case previousAppSecretSealed = "previous_app_secret_sealed", previousAppSecretExpiresAt = "previous_app_secret_expires_at"
    case priorityBudget = "priority_budget", frequentPriorityBudget = "frequent_priority_budget", startBudget = "start_budget"
    case apnsKeySealed = "apns_key_sealed"

    var expression: String {
        switch self {
        // Each token as `<digest in base64> <id> <name>`: neither the digest nor the id has a space.
        case .apiTokens:
            "ARRAY(SELECT encode(token_sha256, 'base64') || ' ' || token_id || ' ' || name FROM api_tokens WHERE api_tokens.app_id = apps.id)"
        default: "apps.\(self.rawValue)"
        }
    }

    /// What an ``App`` is read from.
    static let app: [AppColumn] = [.id, .appKey, .name, .bundleID, .apnsKeyID, .apnsTeamID, .apnsEnvironment, .createdAt]

    /// What authenticates the app's requests (``StoredCredentials``).
    static let credentials: [AppColumn] = Self.app + [
        .appSecretDigest, .masterSecretDigest, .appSecretSealed, .apiTokens, .deviceAssociation,
        .previousAppSecretDigest, .previousAppSecretSealed, .previousAppSecretExpiresAt,
    ]

    /// What a worker needs to deliver the app's pushes.
    static let delivery: [AppColumn] = Self.app + [.priorityBudget, .frequentPriorityBudget, .startBudget, .apnsKeySealed]
}
