import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Keys the deployment keeps across rotations of the server key (`deployment_secrets`), each sealed under the server
/// key and bound to its name; `ServerKeyRotation` seals them again under a new one.
public struct DeploymentSecrets: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The name of the key contact ids are derived from.
    static let contactIDs = "contact-ids"

    /// The key contact ids are derived from. The first call of a deployment stores the key they were derived from
    /// until then, so that existing ids stay what they were: ``ContactIDKey/derived(from:)`` the configured key that
    /// sealed the apps' secrets (the previous one during a rotation).
    public func contactIDKey(serverKey: ServerKey) async throws(StoreError) -> ContactIDKey {
        let bytes = try await self.secret(named: Self.contactIDs, serverKey: serverKey) { () async throws(StoreError) -> Data in
            ContactIDKey.derived(from: try await self.sealingKey(of: serverKey)).bytes
        }
        guard let key = ContactIDKey(bytes: bytes) else {
            throw .unreadableSecret(.deployment(name: Self.contactIDs), reason: "it is not 32 bytes")
        }
        return key
    }

    /// Of the configured keys, the one that opens the oldest app's APNs key, the previous one tried first; with no
    /// app, the oldest configured. A key that opens no app's secrets is not the one contact ids came from.
    private func sealingKey(of serverKey: ServerKey) async throws(StoreError) -> ServerKey {
        let oldest = try await StoreError.mapping {
            try await self.client.query("SELECT app_key, apns_key_sealed FROM apps ORDER BY id LIMIT 1", logger: self.logger)
                .decode((String, Data).self).array().first
        }
        let keys = serverKey.keys.reversed()
        guard let (appKey, sealed) = oldest else { return keys.first! }
        let context = SealedSecret.apnsKey(appKey: appKey).context
        guard let key = keys.first(where: { (try? $0.open(sealed, boundTo: context)) != nil }) else {
            throw .unreadableSecret(
                .deployment(name: Self.contactIDs),
                reason: "it is not stored yet, and \(SealedSecret.apnsKey(appKey: appKey)) \(ServerKeyError.cannotOpen)")
        }
        return key
    }

    /// The secret `name`, stored as `initial()` if there is none yet. Inserted unless present, then read back in a
    /// statement of its own (which sees a row another process inserted meanwhile), so that processes meeting on a
    /// deployment's first use all get the one that was stored.
    private func secret(
        named name: String, serverKey: ServerKey, initial: () async throws(StoreError) -> Data
    ) async throws(StoreError) -> Data {
        let secret = SealedSecret.deployment(name: name)
        var sealed = try await self.sealed(name)
        if sealed == nil {
            let value = serverKey.seal(try await initial(), boundTo: secret.context)
            try await StoreError.mapping {
                _ = try await self.client.query(
                    "INSERT INTO deployment_secrets (name, sealed) VALUES (\(name), \(ByteBuffer(bytes: value))) ON CONFLICT (name) DO NOTHING",
                    logger: self.logger
                )
            }
            sealed = try await self.sealed(name)
        }
        guard let sealed else { throw .database(reason: "\(secret) was stored but is not found") }
        do {
            return try serverKey.open(sealed, boundTo: secret.context)
        } catch {
            throw .unreadableSecret(secret, reason: "\(error)")
        }
    }

    /// The sealed value of the secret `name`, if it is stored.
    private func sealed(_ name: String) async throws(StoreError) -> Data? {
        try await StoreError.mapping {
            try await self.client.query("SELECT sealed FROM deployment_secrets WHERE name = \(name)", logger: self.logger)
                .decode(Data.self).array().first
        }
    }
}
