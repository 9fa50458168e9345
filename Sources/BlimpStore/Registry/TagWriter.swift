import BlimpCore
import Logging
import PostgresNIO

/// Applies ``TagOperations`` to the tags of channels or of named users: `set` first, then `add`, then `remove`.
struct TagWriter: Sendable {
    /// The tag table, and the column and type of the owner its rows belong to.
    let table: String
    let owner: String
    let ownerType: String

    static let channels = TagWriter(table: "channel_tags", owner: "channel_id", ownerType: "uuid")
    static let namedUsers = TagWriter(table: "named_user_tags", owner: "named_user_id", ownerType: "text")

    /// Changes the tags of `owners`, which must exist in the app.
    func apply(
        _ operations: TagOperations,
        appID: Int64,
        owners: [String],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard !owners.isEmpty else { return }
        for (group, tags) in operations.set.sorted(by: { $0.key < $1.key }) {
            try await connection.query(
                """
                DELETE FROM \(unescaped: self.table)
                WHERE app_id = \(appID) AND tag_group = \(group)
                  AND \(unescaped: self.owner) = ANY(\(owners)::text[]::\(unescaped: self.ownerType)[])
                  AND NOT (tag = ANY(\(tags)::text[]))
                """,
                logger: logger
            )
            try await self.add(tags, group: group, appID: appID, owners: owners, on: connection, logger: logger)
        }
        for (group, tags) in operations.add.sorted(by: { $0.key < $1.key }) {
            try await self.add(tags, group: group, appID: appID, owners: owners, on: connection, logger: logger)
        }
        for (group, tags) in operations.remove.sorted(by: { $0.key < $1.key }) where !tags.isEmpty {
            try await connection.query(
                """
                DELETE FROM \(unescaped: self.table)
                WHERE app_id = \(appID) AND tag_group = \(group)
                  AND \(unescaped: self.owner) = ANY(\(owners)::text[]::\(unescaped: self.ownerType)[])
                  AND tag = ANY(\(tags)::text[])
                """,
                logger: logger
            )
        }
    }

    private func add(
        _ tags: [String],
        group: String,
        appID: Int64,
        owners: [String],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard !tags.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO \(unescaped: self.table) (app_id, tag_group, tag, \(unescaped: self.owner))
            SELECT \(appID), \(group), tag, owner
            FROM unnest(\(tags)::text[]) AS tag, unnest(\(owners)::text[]::\(unescaped: self.ownerType)[]) AS owner
            ON CONFLICT DO NOTHING
            """,
            logger: logger
        )
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
