import BlimpCore
import BlimpStore
import Synchronization

/// The deployment's ``ContactIDKey``, read from `deployment_secrets` on first need (stored there on the deployment's
/// first) and kept: it never changes, not even when the server key does.
final class ContactIDSource: Sendable {
    private let secrets: DeploymentSecrets
    private let serverKey: ServerKey
    private let loaded = Mutex<ContactIDKey?>(nil)

    init(secrets: DeploymentSecrets, serverKey: ServerKey) {
        self.secrets = secrets
        self.serverKey = serverKey
    }

    /// The contact id `text` always maps to.
    func contactID(for text: String) async throws(StoreError) -> String {
        try await self.key().stableUUID(for: text).uuidString.lowercased()
    }

    private func key() async throws(StoreError) -> ContactIDKey {
        if let key = self.loaded.withLock({ $0 }) { return key }
        let key = try await self.secrets.contactIDKey(serverKey: self.serverKey)
        self.loaded.withLock { $0 = key }
        return key
    }
}
