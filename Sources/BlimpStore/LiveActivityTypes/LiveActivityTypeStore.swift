import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The app's declared Live Activity types (`live_activity_types`), what checking pushes against them reads, and the
/// types devices report with push-to-start tokens that have no schema yet.
public struct LiveActivityTypeStore: Sendable {
    let client: Database
    let logger: Logger

    public init(client: Database, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// A declared type and when it was declared and last changed.
    public struct Stored: Sendable, Equatable {
        public var type: LiveActivityType
        public var createdAt: Date
        public var updatedAt: Date
    }

    /// What ``LiveActivityTypeRules/check(_:paths:inputs:now:)`` needs: the type each of `names` was last started as,
    /// and the declared types among those and `named`. ``PushPreparationInputs`` reads it for pushes; the console's
    /// compose form, to offer a field per property before it has a push.
    public func inputs(names: [String], types named: [String], appID: Int64) async throws(StoreError) -> LiveActivityTypeRules.Inputs {
        guard !names.isEmpty else { return .init() }
        let started = try await StoreError.mapping {
            try await self.client.query(
                """
                SELECT name, attributes_type FROM activity_names
                WHERE app_id = \(appID) AND name = ANY(\(names)::text[]) AND attributes_type IS NOT NULL
                """,
                logger: self.logger
            ).decode((String, String).self).array()
        }
        let types = Set(named + started.map(\.1)).sorted()
        guard !types.isEmpty else { return .init() }
        let declared = try await self.fetch(
            """
            SELECT \(unescaped: Column.selectList) FROM live_activity_types t
            WHERE t.app_id = \(appID) AND t.attributes_type = ANY(\(types)::text[])
            """)
        return .init(
            types: Dictionary(declared.map { ($0.type.name, $0.type) }, uniquingKeysWith: { first, _ in first }),
            startedTypes: Dictionary(started, uniquingKeysWith: { first, _ in first }))
    }

    /// The declared type `name`, if the app has one.
    public func type(_ name: String, appID: Int64) async throws(StoreError) -> Stored? {
        try await self.fetch(
            """
            SELECT \(unescaped: Column.selectList) FROM live_activity_types t WHERE t.app_id = \(appID) AND t.attributes_type = \(name)
            """
        ).first
    }

    /// The app's declared types by name.
    public func list(appID: Int64) async throws(StoreError) -> [Stored] {
        try await self.fetch(
            """
            SELECT \(unescaped: Column.selectList) FROM live_activity_types t WHERE t.app_id = \(appID) ORDER BY t.attributes_type
            """)
    }

    /// The types devices reported push-to-start tokens for that have no schema, by name (at most 1,000), found by
    /// skipping through the tokens' index one type at a time.
    public func seenWithoutSchema(appID: Int64) async throws(StoreError) -> [String] {
        try await StoreError.mapping {
            try await self.client.query(
                """
                WITH RECURSIVE seen (type) AS (
                    (SELECT attributes_type FROM push_to_start_tokens WHERE app_id = \(appID) ORDER BY attributes_type LIMIT 1)
                    UNION ALL
                    SELECT (SELECT p.attributes_type FROM push_to_start_tokens p
                            WHERE p.app_id = \(appID) AND p.attributes_type > s.type ORDER BY p.attributes_type LIMIT 1)
                    FROM seen s WHERE s.type IS NOT NULL)
                SELECT type FROM seen
                WHERE type IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM live_activity_types t WHERE t.app_id = \(appID) AND t.attributes_type = seen.type)
                LIMIT 1000
                """,
                logger: self.logger
            ).decode(String.self).array()
        }
    }

    /// Declares `type`, or replaces its schemas, with its `live_activity_type.saved` entry by `origin` (`forced`: over
    /// breaking changes with activities in flight); whether it is new (`xmax = 0`: the row was inserted, not updated;
    /// the times cannot tell, as a change in the same instant as the declaration leaves them equal).
    public func save(_ type: LiveActivityType, appID: Int64, now: Date, by origin: AuditOrigin, forced: Bool) async throws(StoreError) -> Bool {
        try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            let created = try await connection.query(
                """
                INSERT INTO live_activity_types (app_id, attributes_type, attributes_schema, content_state_schema, created_at, updated_at)
                VALUES (\(appID), \(type.name), \(type.attributes.json.text), \(type.contentState.json.text), \(now), \(now))
                ON CONFLICT (app_id, attributes_type) DO UPDATE SET
                    attributes_schema = EXCLUDED.attributes_schema, content_state_schema = EXCLUDED.content_state_schema,
                    updated_at = EXCLUDED.updated_at
                RETURNING xmax = 0
                """,
                logger: self.logger
            ).decode(Bool.self).array().first ?? false
            let details = RawJSON.object([.init("created", .bool(created)), .init("forced", .bool(forced))])
            return (created, [origin.entry(appID: appID, .liveActivityTypeSaved, subject: type.name, details: details)])
        }
    }

    /// Deletes the type's schemas (pushes of it go unchecked again), with its `live_activity_type.deleted` entry by
    /// `origin`; whether it was declared.
    public func delete(_ name: String, appID: Int64, at now: Date, by origin: AuditOrigin) async throws(StoreError) -> Bool {
        try await AuditLog.audited(on: self.client, at: now, logger: self.logger) { connection in
            let found = try await connection.query(
                "DELETE FROM live_activity_types WHERE app_id = \(appID) AND attributes_type = \(name) RETURNING 1",
                logger: self.logger
            ).decode(Int.self).array().count == 1
            return (found, found ? [origin.entry(appID: appID, .liveActivityTypeDeleted, subject: name)] : [])
        }
    }

    /// The activities still taking updates (started within 8 hours and not ended, or sent a start and awaiting their
    /// token) of the names last started as `type`: those a change of its schemas concerns.
    public func activitiesInFlight(of type: String, appID: Int64, now: Date) async throws(StoreError) -> Int {
        let oldest = now.addingTimeInterval(-LiveActivityLifetime.updatable)
        return try await StoreError.mapping {
            try await self.client.query(
                """
                SELECT (SELECT count(*) FROM activity_names n JOIN live_activities a ON a.app_id = n.app_id AND a.name = n.name
                        WHERE n.app_id = \(appID) AND n.attributes_type = \(type) AND a.state = 'active' AND a.started_at > \(oldest))
                     + (SELECT count(*) FROM activity_names n JOIN awaiting_activities w ON w.app_id = n.app_id AND w.name = n.name
                        WHERE n.app_id = \(appID) AND n.attributes_type = \(type) AND w.state = 'awaiting' AND w.sent_at > \(oldest))
                """,
                logger: self.logger
            ).decode(Int.self).array().first ?? 0
        }
    }

    /// What a read selects of a type, each column by name.
    enum Column: String, SelectedColumn {
        case attributesType = "attributes_type", attributesSchema = "attributes_schema", contentStateSchema = "content_state_schema"
        case createdAt = "created_at", updatedAt = "updated_at"

        var expression: String { "t.\(self.rawValue)" }
    }

    private func fetch(_ query: PostgresQuery) async throws(StoreError) -> [Stored] {
        let rows = try await StoreError.mapping { try await self.client.query(query, logger: self.logger).collect() }
        do {
            return try rows.map { row throws(UnreadableColumn) in try Self.stored(NamedRow(row)) }
        } catch {
            throw .database(reason: "a live activity type cannot be read: \(error)")
        }
    }

    private static func stored(_ row: NamedRow<Column>) throws(UnreadableColumn) -> Stored {
        let name: String = try row.decode(.attributesType)
        return Stored(
            type: LiveActivityType(
                name: name,
                attributes: try Self.schema(row, .attributesSchema),
                contentState: try Self.schema(row, .contentStateSchema)),
            createdAt: try row.decode(.createdAt),
            updatedAt: try row.decode(.updatedAt))
    }

    /// A stored schema document, parsed again (it was rendered by ``ActivitySchema/json``).
    private static func schema(_ row: NamedRow<Column>, _ column: Column) throws(UnreadableColumn) -> ActivitySchema {
        let json = try row.json(column)
        do {
            return try ActivitySchema.parse(json, at: "")
        } catch {
            throw UnreadableColumn(column.rawValue, "not a schema Blimp renders: \(error)")
        }
    }
}
