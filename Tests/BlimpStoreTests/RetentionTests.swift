import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import BlimpStore

/// The janitor's retention deletes: finished pushes with their parts and audit entries past their app's retention go,
/// in batches of a bounded size, stopping once the budget is spent; the young, the unfinished and what an app keeps
/// longer stay.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct RetentionTests {
    @Test func finishedPushesGoInBoundedBatchesUntilTheBudgetIsSpent() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let appID = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key).app.id
            let now = Date()
            try await FinishedPushes.insert(4, appID: appID, state: .done, finishedAt: now.addingTimeInterval(-30 * 3600), parts: 2, in: client)
            try await FinishedPushes.insert(3, appID: appID, state: .cancelled, finishedAt: now.addingTimeInterval(-40 * 3600), parts: 2, in: client)
            try await FinishedPushes.insert(2, appID: appID, state: .superseded, finishedAt: now.addingTimeInterval(-3600), parts: 2, in: client)
            try await FinishedPushes.insert(1, appID: appID, state: .queued, finishedAt: now.addingTimeInterval(-50 * 3600), parts: 2, in: client)
            let history = PushHistory(client: client, logger: TestDatabase.logger)
            let cutoff = now.addingTimeInterval(-24 * 3600)

            // A spent budget still runs one batch, of at most the batch's size.
            #expect(try await history.deleteFinished(defaultCutoff: cutoff, cutoffs: [:], budget: .zero, batchSize: 3) == 3)
            #expect(try await FinishedPushes.counts(appID: appID, in: client) == (7, 14))
            #expect(try await history.deleteFinished(defaultCutoff: cutoff, cutoffs: [:], budget: .seconds(30), batchSize: 3) == 4)
            #expect(try await FinishedPushes.counts(appID: appID, in: client) == (3, 6))
            #expect(try await history.deleteFinished(defaultCutoff: cutoff, cutoffs: [:], budget: .seconds(30), batchSize: 3) == 0)
        }
    }

    @Test func anAppsOwnRetentionDecidesItsCutoff() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let serverKey = ServerKey.generate().key
            let scores = try await TestApps.create(named: "Scores", in: client, serverKey: serverKey).app
            let orders = try await TestApps.create(named: "Orders", in: client, serverKey: serverKey).app
            let apps = AppStore(client: client, logger: TestDatabase.logger)
            try await apps.setRetention([.pushes: .seconds(48 * 3600), .audit: .seconds(500 * 86400)], appKey: orders.appKey)
            #expect(try await apps.retention(appID: orders.id) == AppRetention(pushes: .seconds(48 * 3600), audit: .seconds(500 * 86400)))
            #expect(try await apps.retention(appID: scores.id) == AppRetention())

            let now = Date()
            for app in [scores, orders] {
                try await FinishedPushes.insert(2, appID: app.id, finishedAt: now.addingTimeInterval(-30 * 3600), in: client)
                try await FinishedPushes.insert(1, appID: app.id, finishedAt: now.addingTimeInterval(-50 * 3600), in: client)
            }
            let policy = RetentionPolicy(pushes: .seconds(24 * 3600))
            let (deployment, overrides) = policy.cutoffs(.pushes, apps: try await apps.retentions(), now: now)
            let deleted = try await PushHistory(client: client, logger: TestDatabase.logger)
                .deleteFinished(defaultCutoff: deployment, cutoffs: overrides, budget: .seconds(30))
            #expect(deleted == 4)
            #expect(try await FinishedPushes.counts(appID: scores.id, in: client).pushes == 0)
            #expect(try await FinishedPushes.counts(appID: orders.id, in: client).pushes == 2)

            // Audit entries: the deployment's year, the app's 500 days, deployment-level entries by the deployment's.
            for (appID, age) in [(scores.id, 400.0), (scores.id, 1), (orders.id, 400), (orders.id, 600), (nil, 400)] as [(Int64?, Double)] {
                try await AuditLog(client: client, logger: TestDatabase.logger, now: { now.addingTimeInterval(-age * 86400) })
                    .record(AuditOrigin.commandLine.entry(appID: appID, .appChanged, subject: "aged \(age)"))
            }
            let audit = AuditLog(client: client, logger: TestDatabase.logger)
            let (yearAgo, auditOverrides) = RetentionPolicy().cutoffs(.audit, apps: try await apps.retentions(), now: now)
            let before = try await Self.auditSubjects(client)
            #expect(try await audit.deleteOld(defaultCutoff: yearAgo, cutoffs: auditOverrides, budget: .seconds(30), batchSize: 1) == 3)
            let after = try await Self.auditSubjects(client)
            #expect(before.subtracting(after) == ["\(scores.id) aged 400.0", "\(orders.id) aged 600.0", "- aged 400.0"])
        }
    }

    @Test func eachChoreGetsWhatTheChoresBeforeItLeftOfTheRoundsBudget() async {
        let budgets = Mutex<[Duration]>([])
        let janitor = Janitor(
            [
                .init("slow") { budget in
                    budgets.withLock { $0.append(budget) }
                    try await Task.sleep(for: .milliseconds(400))
                    return 0
                },
                .init("next") { budget in
                    budgets.withLock { $0.append(budget) }
                    return 0
                },
            ],
            logger: TestDatabase.logger, interval: .seconds(3))
        await janitor.round()
        let seen = budgets.withLock { $0 }
        #expect(seen.count == 2)
        #expect(seen.first.map { $0 > .milliseconds(900) && $0 <= .seconds(1) } == true, "\(seen)")
        #expect(seen.last.map { $0 <= .milliseconds(600) } == true, "\(seen)")
    }

    /// Each audit entry as `<app id or -> <subject>`.
    private static func auditSubjects(_ client: Database) async throws -> Set<String> {
        var subjects = Set<String>()
        let rows = try await client.query("SELECT coalesce(app_id::text, '-') || ' ' || subject FROM audit_events", logger: TestDatabase.logger)
        for try await subject in rows.decode(String.self) { subjects.insert(subject) }
        return subjects
    }
}
