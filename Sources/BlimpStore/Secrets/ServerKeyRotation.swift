import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Seals every stored secret again under the current server key (`blimp secret-key rotate`): each app's `.p8` key,
/// app secret and previous app secret, the deployment's secrets, console accounts' TOTP secrets and webhooks' signing
/// secrets, once processes run with the new key as
/// `BLIMP_SECRET_KEY` and the old one as `BLIMP_PREVIOUS_SECRET_KEY`.
///
/// Rows go in keyset order, `batchSize` at a time, each batch one short transaction that locks its rows: readers
/// go on, and a concurrent change of a row's secrets waits for the batch, then seals under the current key itself.
/// A value the current key opens is left as it is, so a run that stopped midway is finished by running it again.
public struct ServerKeyRotation: Sendable {
    let client: Database
    let logger: Logger
    let serverKey: ServerKey
    let batchSize: Int

    public init(client: Database, logger: Logger, serverKey: ServerKey, batchSize: Int = 100) {
        self.client = client
        self.logger = logger
        self.serverKey = serverKey
        self.batchSize = batchSize
    }

    /// How the stored secrets stand, changing none. It stores the contact-id key if no process has yet, as the API
    /// does on first use, so that the count includes it (`DeploymentSecrets.contactIDKey`).
    public func check() async throws(ServerKeyRotationError) -> SealedSecretCount {
        try await self.run(resealing: false)
    }

    /// Seals under the current key every secret only the previous key opens, and returns the count as it was found;
    /// records a deployment-level `credential.changed` (`server_key`) entry by `origin`, with how many were sealed
    /// again. Refuses, changing nothing, when any secret opens with neither key.
    public func rotate(by origin: AuditOrigin = .commandLine) async throws(ServerKeyRotationError) -> SealedSecretCount {
        let found = try await self.check()
        guard found.unopenable.isEmpty else { throw .unopenable(found.unopenable) }
        let count = try await self.run(resealing: true)
        do {
            try await AuditLog(client: self.client, logger: self.logger).record(
                origin.credentialChanged(appID: nil, .serverKey, details: .object([.init("resealed", .integer(Int64(count.previous)))])))
        } catch {
            throw .store(error)
        }
        return count
    }

    private func run(resealing: Bool) async throws(ServerKeyRotationError) -> SealedSecretCount {
        do {
            _ = try await DeploymentSecrets(client: self.client, logger: self.logger).contactIDKey(serverKey: self.serverKey)
        } catch .unreadableSecret {
            // The walk counts the stored key as unopenable, or, when none could be stored, the apps' secrets.
        } catch {
            throw .store(error)
        }
        var count = SealedSecretCount()
        for table in SealedTable.all {
            try await self.walk(table, resealing: resealing, into: &count)
        }
        // Only a value sealed meanwhile under another key can get here after `rotate`'s check.
        if resealing, !count.unopenable.isEmpty { throw .unopenable(count.unopenable) }
        return count
    }

    /// Counts `table`'s sealed values, batch by batch, sealing those under the previous key again when `resealing`.
    private func walk(_ table: SealedTable, resealing: Bool, into count: inout SealedSecretCount) async throws(ServerKeyRotationError) {
        var after = ""
        while true {
            let batch: Batch
            let start = after
            do {
                batch = try await StoreError.mapping { try await self.batch(of: table, after: start, resealing: resealing) }
            } catch {
                throw .store(error)
            }
            count.add(batch.count)
            guard let last = batch.lastKey, batch.count.unopenable.isEmpty || !resealing else { return }
            after = last
        }
    }

    /// One batch: the rows of `table` after the key `after`, their values counted and, when `resealing` and all of
    /// them open, the previous key's sealed again, in one transaction.
    private func batch(of table: SealedTable, after: String, resealing: Bool) async throws -> Batch {
        let lock = resealing ? "FOR UPDATE" : ""
        return try await self.client.withTransaction(logger: self.logger) { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: table.key), \(unescaped: table.columns.map(\.name).joined(separator: ", "))
                FROM \(unescaped: table.name) WHERE \(unescaped: table.key) > \(after)
                ORDER BY \(unescaped: table.key) LIMIT \(self.batchSize) \(unescaped: lock)
                """,
                logger: self.logger
            )
            var batch = Batch()
            var updates: [(key: String, column: String, sealed: Data)] = []
            for try await row in rows {
                let cells = row.makeRandomAccess()
                let key = try cells[table.key].decode(String.self)
                batch.count.rows[table.name, default: 0] += 1
                batch.lastKey = key
                for column in table.columns {
                    guard let sealed = try cells[column.name].decode(Data?.self) else { continue }
                    let secret = column.secret(key)
                    do {
                        if let resealed = try self.serverKey.resealed(sealed, boundTo: secret.context) {
                            batch.count.previous += 1
                            updates.append((key, column.name, resealed))
                        } else {
                            batch.count.current += 1
                        }
                    } catch {
                        batch.count.unopenable.append(secret)
                    }
                }
            }
            guard resealing, batch.count.unopenable.isEmpty else { return batch }
            for update in updates {
                _ = try await connection.query(
                    """
                    UPDATE \(unescaped: table.name) SET \(unescaped: update.column) = \(ByteBuffer(bytes: update.sealed))\(unescaped: table.touch)
                    WHERE \(unescaped: table.key) = \(update.key)
                    """,
                    logger: self.logger
                )
            }
            return batch
        }
    }

    /// What one batch found.
    private struct Batch: Sendable {
        var count = SealedSecretCount()
        /// The key of the batch's last row; `nil` when it had none (the table is done).
        var lastKey: String?
    }
}

/// A table with sealed columns: its name, the unique text key batches are ordered by, and each sealed column.
struct SealedTable: Sendable {
    let name: String
    let key: String
    let columns: [(name: String, secret: @Sendable (String) -> SealedSecret)]
    /// What an update sets besides the sealed column.
    let touch: String

    /// Every table that holds values sealed under the server key.
    static let all = [
        SealedTable(
            name: "apps", key: "app_key",
            columns: [
                ("apns_key_sealed", { .apnsKey(appKey: $0) }),
                ("app_secret_sealed", { .appSecret(appKey: $0) }),
                ("previous_app_secret_sealed", { .previousAppSecret(appKey: $0) }),
            ],
            touch: ""
        ),
        SealedTable(name: "deployment_secrets", key: "name", columns: [("sealed", { .deployment(name: $0) })], touch: ", updated_at = now()"),
        SealedTable(name: "accounts", key: "email", columns: [("totp_secret_sealed", { .totpSecret(email: $0) })], touch: ""),
        SealedTable(
            name: "webhooks", key: "id",
            columns: [("secret_sealed", { .webhookSecret(id: $0) }), ("previous_secret_sealed", { .previousWebhookSecret(id: $0) })], touch: ""),
    ]
}

/// Stored secrets by the key that opens them.
public struct SealedSecretCount: Sendable, Equatable {
    /// Rows looked at, by table (`apps`, `deployment_secrets`).
    public var rows: [String: Int] = [:]
    /// Values the current key opens (`rotate`: those it found so and left alone).
    public var current = 0
    /// Values only the previous key opens (`rotate`: those it sealed again under the current key).
    public var previous = 0
    /// Values that open with neither key.
    public var unopenable: [SealedSecret] = []

    public init() {}

    mutating func add(_ other: SealedSecretCount) {
        self.rows.merge(other.rows, uniquingKeysWith: +)
        self.current += other.current
        self.previous += other.previous
        self.unopenable += other.unopenable
    }
}

/// Why a server key rotation or check failed, in one line that names no secret.
public enum ServerKeyRotationError: Error, CustomStringConvertible {
    /// Values that open with neither key; rotating seals none again while any does.
    case unopenable([SealedSecret])
    case store(StoreError)

    /// How many unopenable values a message names before it counts the rest.
    static let named = 10

    public var description: String {
        switch self {
        case .unopenable(let secrets):
            let names = secrets.prefix(Self.named).map(\.description).joined(separator: ", ")
                + (secrets.count > Self.named ? " and \(secrets.count - Self.named) more" : "")
            return "\(names) open\(secrets.count == 1 ? "s" : "") with neither BLIMP_SECRET_KEY nor BLIMP_PREVIOUS_SECRET_KEY: "
                + "set the key that sealed them as BLIMP_PREVIOUS_SECRET_KEY, or replace them "
                + "(blimp apps rotate-app-secret, replace-apns-key)"
        case .store(let error):
            return "\(error)"
        }
    }
}
