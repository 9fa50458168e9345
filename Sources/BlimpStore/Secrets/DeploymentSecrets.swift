import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Keys the deployment keeps across rotations of the server key (`deployment_secrets`), each sealed under the server
/// key and bound to its name; `ServerKeyRotation` seals them again under a new one.
public struct DeploymentSecrets: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The name of the key contact ids are derived from.
    static let contactIDs = "contact-ids"

    /// The key contact ids are derived from. The first call of a deployment stores the key they were derived from
    /// until then (``ContactIDKey/derived(from:)``: the previous server key's during a rotation), so existing ids
    /// stay what they were.
    public func contactIDKey(serverKey: ServerKey) async throws(StoreError) -> ContactIDKey {
        let bytes = try await self.secret(named: Self.contactIDs, serverKey: serverKey, initial: ContactIDKey.derived(from: serverKey).bytes)
        guard let key = ContactIDKey(bytes: bytes) else {
            throw .unreadableSecret(.deployment(name: Self.contactIDs), reason: "it is not 32 bytes")
        }
        return key
    }

    /// The secret `name`, stored as `initial` if there is none yet. Inserted unless present, then read back in a
    /// statement of its own (which sees a row another process inserted meanwhile), so that processes meeting on a
    /// deployment's first use all get the one that was stored.
    private func secret(named name: String, serverKey: ServerKey, initial: Data) async throws(StoreError) -> Data {
        let secret = SealedSecret.deployment(name: name)
        let sealed = try await StoreError.mapping {
            _ = try await self.client.query(
                """
                INSERT INTO deployment_secrets (name, sealed)
                VALUES (\(name), \(ByteBuffer(bytes: serverKey.seal(initial, boundTo: secret.context))))
                ON CONFLICT (name) DO NOTHING
                """,
                logger: self.logger
            )
            return try await self.client.query("SELECT sealed FROM deployment_secrets WHERE name = \(name)", logger: self.logger)
                .decode(Data.self).array().first
        }
        guard let sealed else { throw .database(reason: "\(secret) was stored but is not found") }
        do {
            return try serverKey.open(sealed, boundTo: secret.context)
        } catch {
            throw .unreadableSecret(secret, reason: "\(error)")
        }
    }
}
