import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The app's live activity channels (`live_activity_channels`): iOS 18 broadcast channels backing Live Activity names,
/// at most one live per name, the deleted ones kept with when and why (https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns).
public struct LiveActivityChannelStore: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Records a channel APNs created, with its `broadcast_channel.created` entry by `origin`;
    /// ``StoreError/duplicate(_:)`` when the name already has a live one.
    public func insert(_ channel: LiveActivityChannel, appID: Int64, by origin: AuditOrigin) async throws(StoreError) {
        let entry = origin.entry(
            appID: appID, .broadcastChannelCreated, subject: channel.name, details: .object([.init("apns_channel_id", .string(channel.apnsChannelID))]))
        try await AuditLog.audited(
            on: self.client, at: channel.createdAt, logger: self.logger, duplicates: ["live_activity_channels_live": "live activity channel for the name"]
        ) { connection in
            try await connection.query(
                """
                INSERT INTO live_activity_channels (app_id, name, apns_channel_id, storage_policy, created_at)
                VALUES (\(appID), \(channel.name), \(channel.apnsChannelID), \(Int16(channel.storagePolicy.rawValue)), \(channel.createdAt))
                """,
                logger: self.logger)
            return ((), [entry])
        }
    }

    /// The name's live channel, if it has one.
    public func live(name: String, appID: Int64) async throws(StoreError) -> LiveActivityChannel? {
        try await self.fetch(
            """
            SELECT \(unescaped: Column.selectList) FROM live_activity_channels
            WHERE app_id = \(appID) AND name = \(name) AND deleted_at IS NULL
            """
        ).first
    }

    /// Each name's newest channel, live or deleted, for the names that ever had one: what the Push API checks.
    public func newest(names: [String], appID: Int64) async throws(StoreError) -> [String: LiveActivityChannel] {
        guard !names.isEmpty else { return [:] }
        let channels = try await self.fetch(
            """
            SELECT DISTINCT ON (name) \(unescaped: Column.selectList) FROM live_activity_channels
            WHERE app_id = \(appID) AND name = ANY(\(names)::text[])
            ORDER BY name, created_at DESC
            """)
        return Dictionary(channels.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The app's channels by name, the live ones only unless `includingDeleted`, each name's newest first.
    public func list(appID: Int64, includingDeleted: Bool) async throws(StoreError) -> [LiveActivityChannel] {
        try await self.fetch(
            """
            SELECT \(unescaped: Column.selectList) FROM live_activity_channels
            WHERE app_id = \(appID) AND (\(includingDeleted) OR deleted_at IS NULL)
            ORDER BY name, created_at DESC
            """)
    }

    /// Marks the channel deleted, for `reason`, unless it already is; whether it was live. With `origin` (an admin's
    /// deletion), its `broadcast_channel.deleted` entry is recorded with it.
    @discardableResult
    public func markDeleted(
        _ apnsChannelID: String, appID: Int64, reason: LiveActivityChannel.Deletion, at now: Date, by origin: AuditOrigin? = nil
    ) async throws(StoreError) -> Bool {
        try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            let names = try await connection.query(
                """
                UPDATE live_activity_channels SET deleted_at = \(now), deleted_reason = \(reason.rawValue)
                WHERE app_id = \(appID) AND apns_channel_id = \(apnsChannelID) AND deleted_at IS NULL
                RETURNING name
                """,
                logger: self.logger
            ).decode(String.self).array()
            let entries = names.compactMap { name in
                origin?.entry(appID: appID, .broadcastChannelDeleted, subject: name, details: .object([.init("apns_channel_id", .string(apnsChannelID))]))
            }
            return (!names.isEmpty, entries)
        }
    }

    /// Acknowledges the name's newest channel when APNs deleted it, so the name takes pushes again; the channel, or
    /// `nil` when there was none to acknowledge.
    public func acknowledgeDeletedByAPNs(name: String, appID: Int64, at now: Date) async throws(StoreError) -> LiveActivityChannel? {
        try await self.fetch(
            """
            UPDATE live_activity_channels SET acknowledged_at = \(now)
            WHERE app_id = \(appID) AND deleted_reason = 'apns' AND acknowledged_at IS NULL
              AND apns_channel_id = (SELECT newest.apns_channel_id FROM live_activity_channels newest
                                     WHERE newest.app_id = \(appID) AND newest.name = \(name) ORDER BY newest.created_at DESC LIMIT 1)
            RETURNING \(unescaped: Column.selectList)
            """
        ).first
    }

    /// What a read selects of a channel, each column by name.
    enum Column: String, SelectedColumn {
        case name, apnsChannelID = "apns_channel_id", storagePolicy = "storage_policy", createdAt = "created_at"
        case deletedAt = "deleted_at", deletedReason = "deleted_reason", acknowledgedAt = "acknowledged_at"

        var expression: String {
            switch self {
            case .storagePolicy: "storage_policy::int"
            default: self.rawValue
            }
        }
    }

    private func fetch(_ query: PostgresQuery) async throws(StoreError) -> [LiveActivityChannel] {
        let rows = try await StoreError.mapping { try await self.client.query(query, logger: self.logger).collect() }
        do {
            return try rows.map { row throws(UnreadableColumn) in try Self.channel(NamedRow(row)) }
        } catch {
            throw .database(reason: "a live activity channel cannot be read: \(error)")
        }
    }

    private static func channel(_ row: NamedRow<Column>) throws(UnreadableColumn) -> LiveActivityChannel {
        LiveActivityChannel(
            name: try row.decode(.name), apnsChannelID: try row.decode(.apnsChannelID), storagePolicy: try row.decode(.storagePolicy),
            createdAt: try row.decode(.createdAt), deletedAt: try row.decode(.deletedAt), deletion: try row.decodeIfPresent(.deletedReason),
            acknowledgedAt: try row.decode(.acknowledgedAt))
    }
}
