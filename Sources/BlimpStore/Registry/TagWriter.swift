import BlimpCore
import Logging
import PostgresNIO

/// Applies ``TagOperations`` to the tags of channels or of named users: `set` first, then `add`, then `remove`. A
/// channel whose tags changed gets a `TAG_CHANGE` event, in the same transaction.
struct TagWriter: Sendable {
    /// The tag table, and the column and type of the owner its rows belong to.
    let table: String
    let owner: String
    let ownerType: String
    /// Whether a change is a `TAG_CHANGE` event of the owner (a channel).
    let reportsChanges: Bool

    static let channels = TagWriter(table: "channel_tags", owner: "channel_id", ownerType: "uuid", reportsChanges: true)
    static let namedUsers = TagWriter(table: "named_user_tags", owner: "named_user_id", ownerType: "text", reportsChanges: false)

    /// One tag of one owner added or removed.
    private struct Change: Hashable {
        var owner: String
        var group: String
        var tag: String
    }

    /// Changes the tags of `owners`, which must exist in the app.
    func apply(
        _ operations: TagOperations,
        appID: Int64,
        owners: [String],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard !owners.isEmpty else { return }
        // Each tag's net change: `true` added, `false` removed; one undone later in the operations is no change.
        var changes: [Change: Bool] = [:]
        func record(_ rows: PostgresRowSequence, added: Bool, group: String) async throws {
            for try await (owner, tag) in rows.decode((String, String).self) {
                let change = Change(owner: owner, group: group, tag: tag)
                changes[change] = changes[change] == nil ? added : nil
            }
        }
        for (group, tags) in operations.set.sorted(by: { $0.key < $1.key }) {
            let removed = try await connection.query(
                """
                DELETE FROM \(unescaped: self.table)
                WHERE app_id = \(appID) AND tag_group = \(group)
                  AND \(unescaped: self.owner) = ANY(\(owners)::text[]::\(unescaped: self.ownerType)[])
                  AND NOT (tag = ANY(\(tags)::text[]))
                RETURNING \(unescaped: self.owner)::text, tag
                """,
                logger: logger
            )
            try await record(removed, added: false, group: group)
            if !tags.isEmpty {
                try await record(try await self.add(tags, group: group, appID: appID, owners: owners, on: connection, logger: logger), added: true, group: group)
            }
        }
        for (group, tags) in operations.add.sorted(by: { $0.key < $1.key }) where !tags.isEmpty {
            try await record(try await self.add(tags, group: group, appID: appID, owners: owners, on: connection, logger: logger), added: true, group: group)
        }
        for (group, tags) in operations.remove.sorted(by: { $0.key < $1.key }) where !tags.isEmpty {
            let removed = try await connection.query(
                """
                DELETE FROM \(unescaped: self.table)
                WHERE app_id = \(appID) AND tag_group = \(group)
                  AND \(unescaped: self.owner) = ANY(\(owners)::text[]::\(unescaped: self.ownerType)[])
                  AND tag = ANY(\(tags)::text[])
                RETURNING \(unescaped: self.owner)::text, tag
                """,
                logger: logger
            )
            try await record(removed, added: false, group: group)
        }
        if self.reportsChanges, !changes.isEmpty {
            try await Self.reportChanges(changes, appID: appID, on: connection, logger: logger)
        }
    }

    /// Inserts the tags of a group for each owner, and returns the owner and tag of each row inserted.
    private func add(
        _ tags: [String],
        group: String,
        appID: Int64,
        owners: [String],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> PostgresRowSequence {
        try await connection.query(
            """
            INSERT INTO \(unescaped: self.table) (app_id, tag_group, tag, \(unescaped: self.owner))
            SELECT \(appID), \(group), tag, owner
            FROM unnest(\(tags)::text[]) AS tag, unnest(\(owners)::text[]::\(unescaped: self.ownerType)[]) AS owner
            ON CONFLICT DO NOTHING
            RETURNING \(unescaped: self.owner)::text, tag
            """,
            logger: logger
        )
    }

    /// A `TAG_CHANGE` event of each channel among `changes`, as Airship writes one
    /// (https://support.airship.com/hc/en-us/articles/213494063): the tags added and removed, and the channel's tags
    /// now (`current`), each by group.
    private static func reportChanges(_ changes: [Change: Bool], appID: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        let (keys, added) = (Array(changes.keys), Array(changes.values))
        try await connection.query(
            """
            WITH changes AS (
                SELECT * FROM unnest(\(keys.map(\.owner))::uuid[], \(keys.map(\.group))::text[], \(keys.map(\.tag))::text[], \(added)::boolean[])
                AS c (channel_id, tag_group, tag, added))
            INSERT INTO events (app_id, type, occurred_at, channel_id, body)
            SELECT \(appID), '\(unescaped: EventType.tagChange.rawValue)', now(), changed.channel_id, jsonb_strip_nulls(jsonb_build_object(
                'add', (SELECT jsonb_object_agg(tag_group, tags) FROM (
                            SELECT tag_group, jsonb_agg(tag ORDER BY tag) AS tags FROM changes c
                            WHERE c.channel_id = changed.channel_id AND c.added GROUP BY tag_group) AS g),
                'remove', (SELECT jsonb_object_agg(tag_group, tags) FROM (
                            SELECT tag_group, jsonb_agg(tag ORDER BY tag) AS tags FROM changes c
                            WHERE c.channel_id = changed.channel_id AND NOT c.added GROUP BY tag_group) AS g),
                'current', coalesce((SELECT jsonb_object_agg(tag_group, tags) FROM (
                            SELECT tag_group, jsonb_agg(tag ORDER BY tag) AS tags FROM channel_tags t
                            WHERE t.app_id = \(appID) AND t.channel_id = changed.channel_id GROUP BY tag_group) AS g), '{}')))
            FROM (SELECT DISTINCT channel_id FROM changes) AS changed
            """,
            logger: logger)
    }

    /// Every tag of each owner, by group, sorted.
    func tags(
        appID: Int64,
        owners: [String],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [String: [String: [String]]] {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: self.owner)::text, tag_group, tag FROM \(unescaped: self.table)
            WHERE app_id = \(appID) AND \(unescaped: self.owner) = ANY(\(owners)::text[]::\(unescaped: self.ownerType)[])
            ORDER BY 1, 2, 3
            """,
            logger: logger
        )
        var tags: [String: [String: [String]]] = [:]
        for try await (owner, group, tag) in rows.decode((String, String, String).self) {
            tags[owner, default: [:]][group, default: []].append(tag)
        }
        return tags
    }
}
