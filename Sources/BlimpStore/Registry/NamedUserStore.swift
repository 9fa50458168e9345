import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Named users: an app's own user ids, each linking any number of channels, with tags of their own. A channel
/// belongs to one named user at a time.
public struct NamedUserStore: Sendable {
    let client: PostgresClient
    let logger: Logger
    let channels: ChannelStore

    public init(channels: ChannelStore) {
        self.client = channels.client
        self.logger = channels.logger
        self.channels = channels
    }

    /// Links the app's channel to `namedUserID` (created when new), moving it from any other named user.
    public func associate(channelID: UUID, namedUserID: String, appID: Int64) async throws(StoreError) {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                try await Self.upsert([namedUserID], appID: appID, on: connection, logger: self.logger)
                let rows = try await connection.query(
                    """
                    UPDATE channels SET named_user_id = \(namedUserID)
                    WHERE app_id = \(appID) AND channel_id = \(channelID) RETURNING 1
                    """,
                    logger: self.logger
                )
                guard try await rows.collect().count == 1 else { throw StoreError.notFound }
            }
        }
    }

    /// Unlinks the app's channel from `namedUserID` (from whichever named user it has, when `nil`).
    public func disassociate(channelID: UUID, namedUserID: String?, appID: Int64) async throws(StoreError) {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                UPDATE channels SET named_user_id = CASE WHEN \(namedUserID)::text IS NULL OR named_user_id = \(namedUserID)
                                                         THEN NULL ELSE named_user_id END
                WHERE app_id = \(appID) AND channel_id = \(channelID) RETURNING 1
                """,
                logger: self.logger
            )
            guard try await rows.collect().count == 1 else { throw StoreError.notFound }
        }
    }

    /// The named user the app's channel belongs to, if any.
    public func namedUser(ofChannel channelID: UUID, appID: Int64) async throws(StoreError) -> String? {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                "SELECT named_user_id FROM channels WHERE app_id = \(appID) AND channel_id = \(channelID)",
                logger: self.logger
            )
            guard let row = try await rows.decode(String?.self).array().first else { throw StoreError.notFound }
            return row
        }
    }

    /// Changes the tags of the named users (created when new).
    public func changeTags(_ operations: TagOperations, namedUserIDs: [String], appID: Int64) async throws(StoreError) {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                try await Self.upsert(namedUserIDs, appID: appID, on: connection, logger: self.logger)
                try await TagWriter.namedUsers.apply(
                    operations, appID: appID, owners: namedUserIDs, on: connection, logger: self.logger)
            }
        }
    }

    /// The named user with its tags and channels, if the app has it.
    public func lookup(namedUserID: String, appID: Int64) async throws(StoreError) -> NamedUserRecord? {
        try await self.records(appID: appID, namedUserIDs: [namedUserID]).first
    }

    /// Up to `limit` named users in id order, from `start` on (inclusive).
    public func list(appID: Int64, start: String?, limit: Int) async throws(StoreError) -> [NamedUserRecord] {
        let ids = try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT named_user_id FROM named_users
                WHERE app_id = \(appID) AND named_user_id >= coalesce(\(start), '')
                ORDER BY named_user_id LIMIT \(limit)
                """,
                logger: self.logger
            )
            return try await rows.decode(String.self).array()
        }
        return try await self.records(appID: appID, namedUserIDs: ids)
    }

    /// Deletes the named users and uninstalls their channels.
    public func uninstall(namedUserIDs: [String], appID: Int64) async throws(StoreError) {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let rows = try await connection.query(
                    "SELECT channel_id FROM channels WHERE app_id = \(appID) AND named_user_id = ANY(\(namedUserIDs)::text[])",
                    logger: self.logger
                )
                let channelIDs = try await rows.decode(UUID.self).array()
                try await ChannelStore.uninstall(channelIDs, appID: appID, on: connection, logger: self.logger)
                try await connection.query(
                    "DELETE FROM named_users WHERE app_id = \(appID) AND named_user_id = ANY(\(namedUserIDs)::text[])",
                    logger: self.logger
                )
            }
        }
    }

    private static func upsert(_ ids: [String], appID: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO named_users (app_id, named_user_id) SELECT \(appID), id FROM unnest(\(ids)::text[]) AS id
            ON CONFLICT (app_id, named_user_id) DO UPDATE SET updated_at = now()
            """,
            logger: logger
        )
    }

    /// The app's named users among `namedUserIDs`, in that order.
    private func records(appID: Int64, namedUserIDs: [String]) async throws(StoreError) -> [NamedUserRecord] {
        guard !namedUserIDs.isEmpty else { return [] }
        let (users, channelIDs) = try await StoreError.mapping {
            try await self.client.withConnection { connection in
                var users: [String: NamedUserRecord] = [:]
                let rows = try await connection.query(
                    """
                    SELECT named_user_id, created_at, updated_at FROM named_users
                    WHERE app_id = \(appID) AND named_user_id = ANY(\(namedUserIDs)::text[])
                    """,
                    logger: self.logger
                )
                for try await (id, created, updated) in rows.decode((String, Date, Date).self) {
                    users[id] = NamedUserRecord(namedUserID: id, created: created, lastModified: updated, tags: [:], channels: [])
                }
                let tags = try await TagWriter.namedUsers.tags(appID: appID, owners: namedUserIDs, on: connection, logger: self.logger)
                for (id, groups) in tags { users[id]?.tags = groups }
                let channels = try await connection.query(
                    """
                    SELECT named_user_id, channel_id FROM channels
                    WHERE app_id = \(appID) AND named_user_id = ANY(\(namedUserIDs)::text[]) ORDER BY channel_id
                    """,
                    logger: self.logger
                )
                return (users, try await channels.decode((String, UUID).self).array())
            }
        }
        var byUser = users
        let records = try await self.channels.records(appID: appID, channelIDs: channelIDs.map(\.1))
        let byChannel = Dictionary(records.map { ($0.channelID, $0) }, uniquingKeysWith: { first, _ in first })
        for (user, channelID) in channelIDs {
            if let record = byChannel[channelID] { byUser[user]?.channels.append(record) }
        }
        return namedUserIDs.compactMap { byUser[$0] }
    }
}
