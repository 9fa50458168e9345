import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The audit trail (`audit_events`): who did what, from where, in which app. Entries are recorded in one statement,
/// on their own or in the caller's transaction (``record(_:at:on:logger:)``: the intake records the pushes it accepts
/// in the transaction that queues them), and read back newest first, a page at a time.
public struct AuditLog: Sendable {
    let client: Database
    let logger: Logger
    let now: @Sendable () -> Date

    public init(client: Database, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
    }

    /// Records `entries` (one statement).
    public func record(_ entries: [AuditEntry]) async throws(StoreError) {
        guard !entries.isEmpty else { return }
        let at = self.now()
        try await StoreError.mapping {
            try await self.client.withConnection { connection in
                try await Self.record(entries, at: at, on: connection, logger: self.logger)
            }
        }
    }

    /// Records one entry.
    public func record(_ entry: AuditEntry) async throws(StoreError) {
        try await self.record([entry])
    }

    /// Records `entries` on `connection`, within whatever transaction the caller has open there.
    public static func record(_ entries: [AuditEntry], at: Date, on connection: PostgresConnection, logger: Logger) async throws {
        guard !entries.isEmpty else { return }
        try await connection.query(AuditColumn.insert(entries, at: at), logger: logger)
    }

    /// Runs `change` and records the entries it returns in one transaction on `client`: a change is never kept without
    /// its entries, nor they without it. `duplicates` names unique indexes as ``StoreError/mapping(_:duplicates:)`` does.
    static func audited<T: Sendable>(
        on client: Database, at now: Date, logger: Logger, duplicates: [String: String] = [:],
        _ change: @escaping @Sendable (PostgresConnection) async throws -> (T, [AuditEntry])
    ) async throws(StoreError) -> T {
        try await StoreError.mapping({
            try await client.withTransaction(logger: logger) { connection in
                let (result, entries) = try await change(connection)
                try await Self.record(entries, at: now, on: connection, logger: logger)
                return result
            }
        }, duplicates: duplicates)
    }

    /// Whose entries a listing reads.
    public enum Scope: Sendable, Equatable {
        /// One app's.
        case app(Int64)
        /// Every entry of the deployment, across apps and deployment-level ones (the deployment admin's view).
        case deployment
    }

    /// A page of entries, newest first, and the id of the next page's first entry, if there is one.
    public struct Page: Sendable {
        public var records: [AuditRecord]
        public var next: Int64?
    }

    /// Up to `limit` entries of `scope` that `filter` keeps, newest first (by time, then id), from the entry `start`
    /// on (a `next` of an earlier page).
    public func list(_ scope: Scope, filter: AuditFilter, limit: Int, start: Int64? = nil) async throws(StoreError) -> Page {
        let appID: Int64? = if case .app(let id) = scope { id } else { nil }
        let kind = filter.kind?.rawValue
        let label = filter.label
        let query: PostgresQuery = """
            SELECT \(unescaped: AuditColumn.Selected.selectList) FROM audit_events
            WHERE (\(appID)::bigint IS NULL OR app_id = \(appID))
              AND (\(kind)::text IS NULL OR actor_kind = \(kind))
              AND (\(label)::text IS NULL OR actor_label = \(label))
              AND (\(filter.action?.rawValue)::text IS NULL OR action = \(filter.action?.rawValue))
              AND (\(filter.since)::timestamptz IS NULL OR at >= \(filter.since))
              AND (\(filter.until)::timestamptz IS NULL OR at < \(filter.until))
              AND (\(start)::bigint IS NULL OR (at, id) <= (SELECT at, id FROM audit_events WHERE id = \(start)))
            ORDER BY at DESC, id DESC
            LIMIT \(limit + 1)
            """
        let rows = try await StoreError.mapping { try await self.client.query(query, logger: self.logger).collect() }
        var records: [AuditRecord] = []
        do {
            for row in rows { records.append(try Self.record(NamedRow(row))) }
        } catch {
            throw .database(reason: "an audit entry cannot be read: \(error)")
        }
        let next = records.count > limit ? records.removeLast().id : nil
        return Page(records: records, next: next)
    }

    private static func record(_ row: NamedRow<AuditColumn.Selected>) throws(UnreadableColumn) -> AuditRecord {
        let kind: AuditActor.Kind = try row.decode(.actorKind)
        guard let actor = AuditActor(
            kind: kind, accountID: try row.decode(.actorAccountID), label: try row.decode(.actorLabel),
            tokenID: try row.decode(.actorTokenID))
        else { throw UnreadableColumn(AuditColumn.Selected.actorKind.rawValue, "a \(kind.rawValue) without its account or token") }
        let details: String? = try row.decode(.details)
        return AuditRecord(
            id: try row.decode(.id), at: try row.decode(.at),
            entry: AuditEntry(
                appID: try row.decode(.appID), actor: actor, address: try row.decode(.address), action: try row.decode(.action),
                subject: try row.decode(.subject), details: details == nil ? nil : try row.json(.details)))
    }
}
