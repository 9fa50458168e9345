import BlimpCore
import Foundation
import PostgresNIO

extension AppStore {
    /// The retentions of every app that has one of its own, by app id (an app keeping the deployment's is absent).
    public func retentions() async throws(StoreError) -> [Int64: AppRetention] {
        let rows = try await StoreError.mapping {
            try await self.client.query(
                """
                SELECT id, retention_pushes_seconds, retention_outcomes_seconds, retention_audit_seconds FROM apps
                WHERE retention_pushes_seconds IS NOT NULL OR retention_outcomes_seconds IS NOT NULL OR retention_audit_seconds IS NOT NULL
                """,
                logger: self.logger
            ).decode((Int64, Int64?, Int64?, Int64?).self).array()
        }
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.0, Self.retention(pushes: $0.1, outcomes: $0.2, audit: $0.3)) })
    }

    /// The app's own retentions.
    public func retention(appID: Int64) async throws(StoreError) -> AppRetention {
        let rows = try await StoreError.mapping {
            try await self.client.query(
                "SELECT retention_pushes_seconds, retention_outcomes_seconds, retention_audit_seconds FROM apps WHERE id = \(appID)",
                logger: self.logger
            ).decode((Int64?, Int64?, Int64?).self).array()
        }
        guard let row = rows.first else { throw .noSuchApp }
        return Self.retention(pushes: row.0, outcomes: row.1, audit: row.2)
    }

    /// Sets the app's own retention of each setting in `changes` (`nil`: back to the deployment's), keeping the others,
    /// and records an `app.changed` entry naming them.
    public func setRetention(
        _ changes: [RetentionPolicy.Setting: Duration?], appKey: String, by origin: AuditOrigin = .commandLine
    ) async throws(StoreError) {
        guard !changes.isEmpty else { return }
        // Per setting, in `Setting.allCases`' order (pushes, outcomes, audit): whether it changes, and to what.
        let given = RetentionPolicy.Setting.allCases.map { changes[$0] != nil }
        let seconds = RetentionPolicy.Setting.allCases.map { setting in changes[setting].flatMap { $0 }?.components.seconds }
        try await self.updateOne(
            """
            UPDATE apps SET
                retention_pushes_seconds = CASE WHEN \(given[0]) THEN \(seconds[0]) ELSE retention_pushes_seconds END,
                retention_outcomes_seconds = CASE WHEN \(given[1]) THEN \(seconds[1]) ELSE retention_outcomes_seconds END,
                retention_audit_seconds = CASE WHEN \(given[2]) THEN \(seconds[2]) ELSE retention_audit_seconds END
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

    private static func retention(pushes: Int64?, outcomes: Int64?, audit: Int64?) -> AppRetention {
        AppRetention(pushes: pushes.map { .seconds($0) }, outcomes: outcomes.map { .seconds($0) }, audit: audit.map { .seconds($0) })
    }
}
