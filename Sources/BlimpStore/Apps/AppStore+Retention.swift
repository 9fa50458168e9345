import BlimpCore
import Foundation
import PostgresNIO

extension AppStore {
    /// The retentions of every app that has one of its own, by app id (an app keeping the deployment's is absent).
    public func retentions() async throws(StoreError) -> [Int64: AppRetention] {
        let anyOwn = RetentionPolicy.Setting.allCases.map { "\(RetentionColumn(of: $0).rawValue) IS NOT NULL" }.joined(separator: " OR ")
        let rows = try await StoreError.mapping {
            try await self.client.query(
                "SELECT \(unescaped: RetentionColumn.selectList) FROM apps WHERE \(unescaped: anyOwn)", logger: self.logger
            ).collect()
        }
        var retentions: [Int64: AppRetention] = [:]
        do {
            for row in rows {
                let row = NamedRow<RetentionColumn>(row)
                retentions[try row.decode(.id)] = try Self.retention(row)
            }
        } catch {
            throw .database(reason: "an app's retention cannot be read: \(error)")
        }
        return retentions
    }

    /// The app's own retentions.
    public func retention(appID: Int64) async throws(StoreError) -> AppRetention {
        let rows = try await StoreError.mapping {
            try await self.client.query(
                "SELECT \(unescaped: RetentionColumn.selectList) FROM apps WHERE id = \(appID)", logger: self.logger
            ).collect()
        }
        guard let row = rows.first else { throw .noSuchApp }
        do {
            return try Self.retention(NamedRow(row))
        } catch {
            throw .database(reason: "the app's retention cannot be read: \(error)")
        }
    }

    /// Sets the app's own retention of each setting in `changes` (`nil`: back to the deployment's), keeping the others,
    /// and records an `app.changed` entry naming them.
    public func setRetention(
        _ changes: [RetentionPolicy.Setting: Duration?], appKey: String, by origin: AuditOrigin = .commandLine
    ) async throws(StoreError) {
        guard !changes.isEmpty else { return }
        // Per setting, in `Setting.allCases`' order (pushes, outcomes, audit, events): whether it changes, and to what.
        let given = RetentionPolicy.Setting.allCases.map { changes[$0] != nil }
        let seconds = RetentionPolicy.Setting.allCases.map { setting in changes[setting].flatMap { $0 }?.components.seconds }
        try await self.updateOne(
            """
            UPDATE apps SET
                retention_pushes_seconds = CASE WHEN \(given[0]) THEN \(seconds[0]) ELSE retention_pushes_seconds END,
                retention_outcomes_seconds = CASE WHEN \(given[1]) THEN \(seconds[1]) ELSE retention_outcomes_seconds END,
                retention_audit_seconds = CASE WHEN \(given[2]) THEN \(seconds[2]) ELSE retention_audit_seconds END,
                retention_events_seconds = CASE WHEN \(given[3]) THEN \(seconds[3]) ELSE retention_events_seconds END
            WHERE app_key = \(appKey) RETURNING id
            """,
            recording: { appID in
                let details = RetentionPolicy.Setting.allCases.compactMap { setting -> RawJSON.Member? in
                    guard let change = changes[setting] else { return nil }
                    return .init("retention_\(setting.rawValue)", change.map { .string(RetentionPolicy.format($0)) } ?? .null)
                }
                return origin.entry(appID: appID, .appChanged, subject: appKey, details: .object(details))
            })
    }

    private static func retention(_ row: NamedRow<RetentionColumn>) throws(UnreadableColumn) -> AppRetention {
        var retention = AppRetention()
        for setting in RetentionPolicy.Setting.allCases {
            let seconds: Int64? = try row.decode(RetentionColumn(of: setting))
            retention[setting] = seconds.map { .seconds($0) }
        }
        return retention
    }

    /// An app's own retentions as `apps` holds them: in seconds, NULL where it keeps the deployment's.
    enum RetentionColumn: String, SelectedColumn {
        case id
        case pushes = "retention_pushes_seconds", outcomes = "retention_outcomes_seconds", audit = "retention_audit_seconds"
        case events = "retention_events_seconds"

        var expression: String { self.rawValue }

        /// The column of `setting`.
        init(of setting: RetentionPolicy.Setting) {
            switch setting {
            case .pushes: self = .pushes
            case .outcomes: self = .outcomes
            case .audit: self = .audit
            case .events: self = .events
            }
        }
    }
}
