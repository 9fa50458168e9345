import Foundation
import Logging
import PostgresNIO

/// The nonces of the signed SDK requests already accepted, per app, kept in PostgreSQL until their signature's
/// window has passed: a captured request is accepted once, by any API replica, never twice.
///
/// Each signed request costs a row. Concurrent ones are written together (see ``Coalescer``), so under load a
/// thousand devices cost a statement and a commit, not a thousand.
public struct NonceLedger: Sendable {
    /// How long a row outlives its expiry before the janitor deletes it: a margin for the clock of the replica that
    /// wrote it running behind the janitor's.
    static let margin: TimeInterval = 3600

    private let writes: Coalescer<UsedNonce, Bool>
    private let client: Database
    private let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
        self.writes = Coalescer { nonces in try await Self.record(nonces, client: client, logger: logger) }
    }

    /// A signed request's nonce, and when its signature stops being accepted anyway.
    struct UsedNonce: Sendable {
        var key: Key
        var expiresAt: Date

        /// A row's key: nonces are unique per app.
        struct Key: Hashable {
            var appID: Int64
            var nonce: UUID
        }
    }

    /// Records `nonce` for the app; `true` the first time, `false` when a request with it was accepted before.
    public func firstUse(appID: Int64, nonce: UUID, expiresAt: Date) async throws(StoreError) -> Bool {
        try await StoreError.mapping(UsedNonce(key: .init(appID: appID, nonce: nonce), expiresAt: expiresAt), to: self.writes)
    }

    /// Deletes the nonces whose signatures have expired, app by app in batches (``BatchedDelete``) until `budget` is
    /// spent; returns how many.
    public func deleteExpired(budget: Duration, batchSize: Int = BatchedDelete.size) async throws(StoreError) -> Int {
        try await BatchedDelete.deleteOlder(
            from: "used_nonces", column: "expires_at", before: Date().addingTimeInterval(-Self.margin),
            budget: budget, size: batchSize, client: self.client, logger: self.logger)
    }

    /// Inserts the nonces; `true` for each inserted, `false` for each already there or earlier in the batch.
    private static func record(_ nonces: [UsedNonce], client: Database, logger: Logger) async throws -> [Bool] {
        var seen = Set<UsedNonce.Key>()
        let firsts = nonces.map { seen.insert($0.key).inserted }
        let distinct = zip(nonces, firsts).filter(\.1).map(\.0)
        let rows = try await client.query(
            """
            INSERT INTO used_nonces (app_id, nonce, expires_at)
            SELECT * FROM unnest(\(distinct.map(\.key.appID))::bigint[], \(distinct.map(\.key.nonce))::uuid[],
                                 \(distinct.map(\.expiresAt))::timestamptz[])
            ON CONFLICT DO NOTHING
            RETURNING app_id, nonce
            """,
            logger: logger
        )
        var inserted = Set<UsedNonce.Key>()
        for try await (appID, nonce) in rows.decode((Int64, UUID).self) { inserted.insert(.init(appID: appID, nonce: nonce)) }
        return zip(nonces, firsts).map { nonce, first in first && inserted.contains(nonce.key) }
    }
}
