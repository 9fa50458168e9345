import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Channels, their tags and their Live Activity tokens, as the SDK registers them and the server API reads and
/// changes them. Every method is scoped to one app: another app's channel is never found.
public struct ChannelStore: Sendable {
    let client: Database
    let logger: Logger
    /// The clock for lifetimes; tests inject their own.
    let now: @Sendable () -> Date

    /// Channel creations and activity tokens, coalesced across concurrent requests.
    let writer: RegistrationWriter

    /// With `preparedStatements` (not through a transaction pooler), the writes every device makes are prepared once
    /// per connection.
    public init(client: Database, logger: Logger, preparedStatements: Bool = true, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
        self.writer = RegistrationWriter(client: client, logger: logger, prepared: preparedStatements, now: now)
    }

    // MARK: - Device API

    /// Registers a channel (`POST /api/channels`). A push address the app already has finds its channel, which
    /// is updated and reinstalled, instead of making a duplicate.
    public func register(
        _ registration: CheckedChannelRegistration,
        appID: Int64
    ) async throws(StoreError) -> (channelID: UUID, created: Bool) {
        let channelID = UUID.random()
        let created = try await StoreError.mapping(.init(registration, appID: appID, channelID: channelID), to: self.writer.creations)
        if created { return (channelID, true) }
        // The push address is registered: that channel is this device's.
        guard let pushAddress = registration.pushAddress else {
            throw .database(reason: "the insert returned no row")
        }
        let existing = try await StoreError.mapping {
            let rows = try await self.client.query(
                "SELECT channel_id FROM channels WHERE app_id = \(appID) AND push_address = \(pushAddress)",
                logger: self.logger
            )
            return try await rows.decode(UUID.self).array().first
        }
        guard let existing else { return try await self.register(registration, appID: appID) }  // it moved meanwhile
        try await self.update(registration, channelID: existing, appID: appID)
        return (existing, false)
    }

    /// Updates a registered channel (`PUT /api/channels/{id}`): fields the registration leaves out keep their value.
    /// A push address another channel of the app had moves to this one.
    public func update(
        _ registration: CheckedChannelRegistration,
        channelID: UUID,
        appID: Int64
    ) async throws(StoreError) {
        let fields = ChannelColumns(registration)
        try await self.transaction(needed: true) { connection in
            if let pushAddress = registration.pushAddress {
                try await connection.query(
                    """
                    UPDATE channels SET push_address = NULL, opt_in = false
                    WHERE app_id = \(appID) AND push_address = \(pushAddress) AND channel_id <> \(channelID)
                    """,
                    logger: self.logger
                )
            }
            let rows = try await connection.query(
                """
                UPDATE channels SET
                    push_address = coalesce(\(registration.pushAddress), push_address),
                    opt_in = coalesce(\(fields.optIn), opt_in),
                    background = coalesce(\(fields.background), background),
                    frequent_pushes_enabled = coalesce(\(fields.frequentPushes), frequent_pushes_enabled),
                    alias = coalesce(\(fields.alias), alias),
                    timezone = coalesce(\(fields.timezone), timezone),
                    locale_language = coalesce(\(fields.localeLanguage), locale_language),
                    locale_country = coalesce(\(fields.localeCountry), locale_country),
                    badge = coalesce(\(fields.badge), badge),
                    quiet_time = coalesce(\(fields.quietTimeJSON)::jsonb, quiet_time),
                    installed = true,
                    last_registration = \(self.now())
                WHERE app_id = \(appID) AND channel_id = \(channelID)
                RETURNING 1
                """,
                logger: self.logger
            )
            guard try await rows.collect().count == 1 else { throw StoreError.notFound }
            try await TagWriter.channels.apply(
                registration.tags, appID: appID, owners: [channelID.lowercased], on: connection, logger: self.logger)
        }
    }

    /// Applies the SDK's batch (`PUT /api/channels/sdk/batch/{id}`): tags and attributes together, then Live
    /// Activity entries one after another, in order, each last-writer-wins by its `action_ts_ms`. An update token that
    /// releases a held push wakes the workers; one of an activity started over 12 hours ago is dropped.
    public func apply(_ batch: CheckedChannelBatch, channelID: UUID, appID: Int64) async throws(StoreError) {
        // An activity entry proves the channel is the app's (a foreign key, or the token writer's join); else ask.
        if !batch.tags.isEmpty || !batch.attributes.isEmpty || batch.liveActivities.isEmpty {
            try await self.transaction(needed: !batch.tags.isEmpty) { connection in
                let rows = try await connection.query(
                    "SELECT 1 FROM channels WHERE app_id = \(appID) AND channel_id = \(channelID) FOR SHARE",
                    logger: self.logger
                )
                guard try await rows.collect().count == 1 else { throw StoreError.notFound }
                try await TagWriter.channels.apply(
                    batch.tags, appID: appID, owners: [channelID.lowercased], on: connection, logger: self.logger)
                if !batch.attributes.isEmpty {
                    try await Self.changeAttributes(batch.attributes, channelID: channelID, appID: appID, on: connection, logger: self.logger)
                }
            }
        }
        for update in batch.liveActivities {
            let statement: PostgresQuery
            switch update {
            case .setActivity(let name, let activityID, let token, let startedAt, let actionMilliseconds):
                // The SDK resends a batch that got a 4xx, so a token of an activity iOS removed long ago is dropped, not refused.
                guard self.now().timeIntervalSince(startedAt) < LiveActivityLifetime.kept else {
                    ActivityTokenMetrics.count("ignored_ended")
                    continue
                }
                let token = RegistrationWriter.ActivityToken(
                    appID: appID, channelID: channelID, name: name, activityID: activityID, token: token,
                    startedAt: startedAt.timeIntervalSince1970, actionMilliseconds: actionMilliseconds)
                let write = try await StoreError.mapping(token, to: self.writer.activities)
                guard write.found else { throw .notFound }
                if write.awaited {
                    ActivityTokenMetrics.count(write.released ? "released" : "awaited")
                } else if write.created {
                    ActivityTokenMetrics.count("unawaited")
                }
                if write.released {
                    _ = try await StoreError.mapping {
                        try await self.client.query("SELECT pg_notify(\(DispatchStore.channel), \(DispatchStore.releasedPayload))", logger: self.logger)
                    }
                }
                continue
            case .removeActivity(let name, let activityID, let startedAt, let actionMilliseconds):
                statement = LiveActivityStatements.removeActivity(
                    name: name, activityID: activityID, startedAt: startedAt, actionMilliseconds: actionMilliseconds,
                    channelID: channelID, appID: appID, now: self.now())
            case .setStartToken(let attributesType, let token, let actionMilliseconds):
                statement = LiveActivityStatements.startToken(
                    token, attributesType: attributesType, actionMilliseconds: actionMilliseconds,
                    channelID: channelID, appID: appID, now: self.now())
            case .removeStartToken(let attributesType, let actionMilliseconds):
                statement = LiveActivityStatements.startToken(
                    nil, attributesType: attributesType, actionMilliseconds: actionMilliseconds,
                    channelID: channelID, appID: appID, now: self.now())
            }
            _ = try await StoreError.mapping { try await self.client.query(statement, logger: self.logger) }
        }
    }

    /// Applies attribute changes in one statement: their net effect (the last change of each key wins), with new
    /// keys left out when the channel would keep more than ``CheckedChannelBatch/maximumAttributesPerChannel``.
    private static func changeAttributes(
        _ changes: [(key: String, value: JSONValue?)], channelID: UUID, appID: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws {
        var net: [String: JSONValue?] = [:]
        for (key, value) in changes { net[key] = .some(value) }
        let sets = try JSONText(JSONValue.object(net.compactMapValues { $0 })).text
        let removals = net.filter { $0.value == nil }.map(\.key)
        try await connection.query(
            """
            UPDATE channels SET attributes = CASE
                WHEN (SELECT count(*) FROM jsonb_object_keys((attributes - \(removals)::text[]) || \(sets)::jsonb))
                     <= \(CheckedChannelBatch.maximumAttributesPerChannel)
                THEN (attributes - \(removals)::text[]) || \(sets)::jsonb
                ELSE (attributes - \(removals)::text[]) || (
                    SELECT coalesce(jsonb_object_agg(s.key, s.value), '{}') FROM jsonb_each(\(sets)::jsonb) s
                    WHERE attributes ? s.key)
                END
            WHERE app_id = \(appID) AND channel_id = \(channelID)
            """,
            logger: logger)
    }

    // MARK: - Server API

    /// The channel, if it is the app's.
    public func lookup(channelID: UUID, appID: Int64) async throws(StoreError) -> ChannelRecord? {
        try await self.records(appID: appID, channelIDs: [channelID]).first
    }

    /// Up to `limit` channels in channel-id order, from `start` on (inclusive).
    public func list(appID: Int64, start: UUID?, limit: Int) async throws(StoreError) -> [ChannelRecord] {
        let channelIDs = try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT channel_id FROM channels
                WHERE app_id = \(appID) AND channel_id >= coalesce(\(start), '00000000-0000-0000-0000-000000000000'::uuid)
                ORDER BY channel_id LIMIT \(limit)
                """,
                logger: self.logger
            )
            return try await rows.decode(UUID.self).array()
        }
        return try await self.records(appID: appID, channelIDs: channelIDs)
    }

    /// Changes the tags of those of `channelIDs` that are the app's; returns how many were.
    public func changeTags(
        _ operations: TagOperations,
        channelIDs: [UUID],
        appID: Int64
    ) async throws(StoreError) -> Int {
        try await self.transaction(needed: true) { connection in
            let existing = try await self.existing(channelIDs, appID: appID, on: connection)
            try await TagWriter.channels.apply(operations, appID: appID, owners: existing, on: connection, logger: self.logger)
            return existing.count
        }
    }

    /// Marks the app's channels among `channelIDs` uninstalled: they receive nothing more, and their Live Activity
    /// tokens are forgotten. A later registration reinstalls a channel.
    public func uninstall(channelIDs: [UUID], appID: Int64) async throws(StoreError) {
        try await self.transaction(needed: false) { connection in
            try await Self.uninstall(channelIDs, appID: appID, on: connection, logger: self.logger)
        }
    }

    /// Deletes Live Activity rows past their lifetime: 12 hours after the start, when iOS has removed the activity. A
    /// dismissed activity stays on record until then, its state `dismissed` and its row a tombstone against a late
    /// `set` of the same activity.
    /// Deleted app by app in batches of `batchSize` (``BatchedDelete``) until `budget` is spent. Returns how many went.
    public func deleteExpiredActivities(budget: Duration, batchSize: Int = BatchedDelete.size) async throws(StoreError) -> Int {
        try await BatchedDelete.deleteOlder(
            from: "live_activities", column: "started_at", before: self.now().addingTimeInterval(-LiveActivityLifetime.kept),
            budget: budget, size: batchSize, client: self.client, logger: self.logger)
    }

    // MARK: - Shared with NamedUserStore

    /// Uninstalls the app's channels among `channelIDs`, in one statement.
    static func uninstall(
        _ channelIDs: [UUID],
        appID: Int64,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            WITH gone AS (
                UPDATE channels SET installed = false, opt_in = false, background = false
                WHERE app_id = \(appID) AND channel_id = ANY(\(channelIDs.map(\.lowercased))::uuid[])
                RETURNING channel_id),
            activities AS (
                DELETE FROM live_activities WHERE app_id = \(appID) AND channel_id IN (SELECT channel_id FROM gone))
            DELETE FROM push_to_start_tokens WHERE app_id = \(appID) AND channel_id IN (SELECT channel_id FROM gone)
            """,
            logger: logger
        )
    }

    /// The app's channels among `channelIDs`, in that order, each with its tags, activities and push-to-start
    /// tokens.
    func records(appID: Int64, channelIDs: [UUID]) async throws(StoreError) -> [ChannelRecord] {
        guard !channelIDs.isEmpty else { return [] }
        return try await StoreError.mapping {
            try await ChannelRecords(appID: appID, now: self.now(), logger: self.logger).fetch(channelIDs, client: self.client)
        }
    }

    private func existing(_ channelIDs: [UUID], appID: Int64, on connection: PostgresConnection) async throws -> [String] {
        let rows = try await connection.query(
            """
            SELECT channel_id::text FROM channels
            WHERE app_id = \(appID) AND channel_id = ANY(\(channelIDs.map(\.lowercased))::uuid[])
            """,
            logger: self.logger
        )
        return try await rows.decode(String.self).array()
    }

    /// Runs `body` on one connection, in a transaction when `needed` (a single statement commits by itself).
    private func transaction<T: Sendable>(
        needed: Bool,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(StoreError) -> T {
        try await StoreError.mapping {
            if needed {
                try await self.client.withTransaction(logger: self.logger) { try await body($0) }
            } else {
                try await self.client.withConnection { try await body($0) }
            }
        }
    }
}

extension UUID {
    /// The canonical lower-case text form, as PostgreSQL writes UUIDs.
    var lowercased: String { self.lowercaseString }
}
