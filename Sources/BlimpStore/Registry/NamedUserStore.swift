import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Named users: an app's own user ids, each linking any number of channels, with tags of their own. A channel
/// belongs to one named user at a time.
public struct NamedUserStore: Sendable {
    let client: Database
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

    /// The most channels one answer lists: a named user's record, or a page of named users, stops there.
    public static let maximumChannels = 1000

    /// The named user with its tags and up to ``maximumChannels`` channels in id order, from `channelsFrom`
    /// (inclusive) on, if the app has it.
    public func lookup(namedUserID: String, appID: Int64, channelsFrom start: UUID? = nil) async throws(StoreError) -> NamedUserRecord? {
        try await self.records(appID: appID, namedUserIDs: [namedUserID], channelsFrom: start).records.first
    }

    /// Up to `limit` named users in id order, from `start` on (inclusive); the page ends early after the named user
    /// that brings its channels to ``maximumChannels``. `next` is the first named user left for the next page.
    public func list(appID: Int64, start: String?, limit: Int) async throws(StoreError) -> (records: [NamedUserRecord], next: String?) {
        let ids = try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT named_user_id FROM named_users
                WHERE app_id = \(appID) AND named_user_id >= coalesce(\(start), '')
                ORDER BY named_user_id LIMIT \(limit + 1)
                """,
                logger: self.logger
            )
            return try await rows.decode(String.self).array()
        }
        let page = try await self.records(appID: appID, namedUserIDs: Array(ids.prefix(limit)), channelsFrom: nil)
        return (page.records, page.next ?? (ids.count > limit ? ids[limit] : nil))
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

    /// The app's named users among `namedUserIDs`, in that order, each with up to ``maximumChannels`` channels from
    /// `channelsFrom` on (``NamedUserRecord/moreChannelsFrom`` says where the rest begin). They stop after the one
    /// that brings the channels listed to ``maximumChannels``; `next` is then the first named user left out.
    private func records(
        appID: Int64, namedUserIDs: [String], channelsFrom start: UUID?
    ) async throws(StoreError) -> (records: [NamedUserRecord], next: String?) {
        guard !namedUserIDs.isEmpty else { return ([], nil) }
        let start = start ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let (unfilled, channelIDs, next) = try await StoreError.mapping {
            try await self.client.withConnection { connection in
                // Each named user's channels are counted up to one more than is listed: enough to know whether more
                // follow, and no more work for a named user with a million.
                let rows = try await connection.query(
                    """
                    SELECT n.named_user_id, n.created_at, n.updated_at,
                           (SELECT count(*)::int FROM (SELECT 1 FROM channels c
                                WHERE c.app_id = n.app_id AND c.named_user_id = n.named_user_id AND c.channel_id >= \(start)
                                LIMIT \(Self.maximumChannels + 1)) AS counted)
                    FROM named_users n
                    WHERE n.app_id = \(appID) AND n.named_user_id = ANY(\(namedUserIDs)::text[])
                    """,
                    logger: self.logger
                )
                var found: [String: (record: NamedUserRecord, channels: Int)] = [:]
                for try await (id, created, updated, channels) in rows.decode((String, Date, Date, Int).self) {
                    found[id] = (NamedUserRecord(namedUserID: id, created: created, lastModified: updated, tags: [:], channels: []), channels)
                }
                var listed: [NamedUserRecord] = []
                var channelCount = 0
                var next: String?
                for id in namedUserIDs {
                    guard let (record, channels) = found[id] else { continue }
                    if channelCount >= Self.maximumChannels {
                        next = id
                        break
                    }
                    listed.append(record)
                    channelCount += min(channels, Self.maximumChannels)
                }
                let channels = try await connection.query(
                    """
                    SELECT u.id, c.channel_id FROM unnest(\(listed.map(\.namedUserID))::text[]) AS u (id),
                        LATERAL (SELECT channel_id FROM channels
                                 WHERE app_id = \(appID) AND named_user_id = u.id AND channel_id >= \(start)
                                 ORDER BY channel_id LIMIT \(Self.maximumChannels + 1)) AS c
                    ORDER BY c.channel_id
                    """,
                    logger: self.logger
                )
                var channelIDs: [String: [UUID]] = [:]
                for try await (id, channelID) in channels.decode((String, UUID).self) { channelIDs[id, default: []].append(channelID) }
                let tags = try await TagWriter.namedUsers.tags(
                    appID: appID, owners: listed.map(\.namedUserID), on: connection, logger: self.logger)
                for index in listed.indices { listed[index].tags = tags[listed[index].namedUserID] ?? [:] }
                return (listed, channelIDs, next)
            }
        }
        var listed = unfilled
        let records = try await self.channels.records(appID: appID, channelIDs: channelIDs.values.flatMap { $0.prefix(Self.maximumChannels) })
        let byChannel = Dictionary(records.map { ($0.channelID, $0) }, uniquingKeysWith: { first, _ in first })
        for index in listed.indices {
            let ids = channelIDs[listed[index].namedUserID] ?? []
            listed[index].channels = ids.prefix(Self.maximumChannels).compactMap { byChannel[$0] }
            listed[index].moreChannelsFrom = ids.count > Self.maximumChannels ? ids[Self.maximumChannels] : nil
        }
        return (listed, next)
    }
}
