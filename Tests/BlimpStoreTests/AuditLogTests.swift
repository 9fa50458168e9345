import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// The audit trail's store: entries recorded alone, several in one statement and inside a caller's transaction (the
/// intake's), read back by app or across the deployment, filtered and paged newest first; API tokens named by a
/// stable id; credential changes recorded without their secrets.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct AuditLogTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    func withLog(_ body: (AuditLog, App, App, TestClock, Database, ServerKey) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let key = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: key)
            let (other, _) = try await TestApps.create(named: "Other", in: client, serverKey: key)
            let clock = TestClock(Self.start)
            try await body(AuditLog(client: client, logger: TestDatabase.logger, now: { clock.now }), app, other, clock, client, key)
        }
    }

    @Test func entriesAreReadBackAsRecordedNewestFirst() async throws {
        try await self.withLog { log, app, other, clock, _, _ in
            let token = UUID.random()
            let web = AuditOrigin(actor: .apiToken(id: token, name: "ci"), address: "203.0.113.9")
            try await log.record(web.entry(appID: app.id, .pushAccepted, subject: "p1", details: .object([.init("kind", .string("alert"))])))
            clock.advance(by: 60)
            try await log.record([
                AuditOrigin.commandLine.credentialChanged(appID: app.id, .masterSecret),
                AuditOrigin(actor: .account(id: 7, email: "ana@example.com"), address: "::1").entry(appID: other.id, .signIn),
                AuditOrigin(actor: .adminToken, address: nil).entry(appID: nil, .credentialChanged, subject: "server_key"),
            ])

            // The app's creation (TestApps, by the command line, at the real time: earlier) comes last.
            let page = try await log.list(.app(app.id), filter: AuditFilter(), limit: 10)
            #expect(page.next == nil)
            #expect(page.records.map(\.entry.action) == [.credentialChanged, .pushAccepted, .appCreated])
            let first = try #require(page.records.dropLast().last)
            #expect(first.at == Self.start)
            #expect(first.entry == AuditEntry(
                appID: app.id, actor: .apiToken(id: token, name: "ci"), address: "203.0.113.9", action: .pushAccepted, subject: "p1",
                details: .object([.init("kind", .string("alert"))])))

            let everything = try await log.list(.deployment, filter: AuditFilter(), limit: 10)
            #expect(everything.records.count == 6)
            #expect(everything.records.contains { $0.entry.actor == .account(id: 7, email: "ana@example.com") && $0.entry.appID == other.id })
            #expect(everything.records.contains { $0.entry.appID == nil && $0.entry.actor == .adminToken })
        }
    }

    @Test func filtersAndPagesKeepTheirOrder() async throws {
        try await self.withLog { log, app, _, clock, _, _ in
            let ana = AuditOrigin(actor: .account(id: 1, email: "ana@example.com"), address: "198.51.100.1")
            for index in 0..<7 {
                try await log.record(ana.entry(appID: app.id, .pushAccepted, subject: "push-\(index)"))
                try await log.record(AuditOrigin(actor: .masterSecret, address: nil).entry(appID: app.id, .scheduleCreated, subject: "s-\(index)"))
                clock.advance(by: 10)
            }
            var subjects: [String] = []
            var start: Int64?
            repeat {
                let page = try await log.list(.app(app.id), filter: AuditFilter(label: "ana@example.com"), limit: 3, start: start)
                subjects += page.records.compactMap(\.entry.subject)
                start = page.next
            } while start != nil
            #expect(subjects == (0..<7).reversed().map { "push-\($0)" })

            let kind = try await log.list(.app(app.id), filter: AuditFilter(kind: .masterSecret), limit: 100)
            #expect(kind.records.count == 7 && kind.records.allSatisfy { $0.entry.action == .scheduleCreated })
            let window = AuditFilter(action: .pushAccepted, since: Self.start.addingTimeInterval(20), until: Self.start.addingTimeInterval(40))
            #expect(try await log.list(.app(app.id), filter: window, limit: 100).records.compactMap(\.entry.subject) == ["push-3", "push-2"])
        }
    }

    @Test func theIntakeRecordsEachPushInItsTransaction() async throws {
        try await self.withLog { _, app, _, clock, client, _ in
            let intake = PushIntake(client: client, logger: TestDatabase.logger, now: { clock.now })
            let pushes = try [PushIntakeTests.push(#"{"event": "update", "name": "m", "content_state": {"home": 1}}"#),
                              PushIntakeTests.push(#"{"event": "end", "name": "n", "content_state": {"home": 2}}"#)]
            let origin = AuditOrigin(actor: .masterSecret, address: "192.0.2.1")
            let submission = try PushSubmission(appID: app.id, pushes: pushes, idempotencyKey: "once", origin: origin)
            #expect(try await intake.accept(submission) == .accepted(operationID: submission.operationID, pushIDs: submission.pushIDs))
            // A replay of the key queues nothing, so records nothing.
            _ = try await intake.accept(PushSubmission(appID: app.id, pushes: pushes, idempotencyKey: "once", origin: origin))

            let log = AuditLog(client: client, logger: TestDatabase.logger)
            let records = try await log.list(.app(app.id), filter: AuditFilter(action: .pushAccepted), limit: 10).records.reversed()
            #expect(records.map(\.entry.subject) == submission.pushIDs.map(\.lowercaseString))
            #expect(records.allSatisfy { $0.entry.action == .pushAccepted && $0.entry.actor == .masterSecret && $0.entry.address == "192.0.2.1" })
            #expect(records.first?.entry.details?["name"] == .string("m"))
            #expect(records.last?.entry.details?["event"] == .string("end"))
            #expect(records.first?.entry.details?["operation_id"] == .string(submission.operationID.lowercaseString))
        }
    }

    @Test func credentialChangesAreRecordedWithoutTheirSecrets() async throws {
        try await self.withLog { log, app, _, _, client, key in
            let store = AppStore(client: client, logger: TestDatabase.logger)
            let person = AuditOrigin(actor: .adminToken, address: "198.51.100.7")
            let token = try await store.createToken(appKey: app.appKey, name: "ci", by: person)
            let tokenID = try #require(try await store.tokens(appKey: app.appKey).first?.id)
            let credentials = try #require(try await store.credentials(appKey: app.appKey, serverKey: key))
            #expect(credentials.apiToken(token) == .apiToken(id: tokenID, name: "ci"))
            let master = try await store.rotateMasterSecret(appKey: app.appKey)
            let appSecret = try await store.rotateAppSecret(appKey: app.appKey, overlap: 60, serverKey: key, by: person)
            #expect(try await store.revokeToken(appKey: app.appKey, name: "ci"))
            await #expect(throws: StoreError.noSuchApp) { try await store.rotateMasterSecret(appKey: RandomToken.make()) }

            let records = try await log.list(.app(app.id), filter: AuditFilter(action: .credentialChanged), limit: 10).records.reversed()
            #expect(records.map(\.entry.subject) == ["api_token_issued", "master_secret", "app_secret", "api_token_revoked"])
            #expect(records.map(\.entry.actor) == [.adminToken, .commandLine, .adminToken, .commandLine])
            #expect(records.first?.entry.details?["token_id"] == .string(tokenID.lowercaseString))
            #expect(records.last?.entry.details?["name"] == .string("ci"))
            let created = try await log.list(.deployment, filter: AuditFilter(action: .appCreated), limit: 10).records
            #expect(created.map(\.entry.subject).contains(app.appKey))
            try await store.setDeviceAssociation(false, appKey: app.appKey)
            let changed = try await log.list(.app(app.id), filter: AuditFilter(action: .appChanged), limit: 10).records
            #expect(changed.map(\.entry.details) == [.object([.init("device_association", .bool(false))])])

            let rows = try await client.query("SELECT string_agg(audit_events::text, ' ') FROM audit_events", logger: TestDatabase.logger)
                .decode(String?.self).reduce(into: "") { $0 += $1 ?? "" }
            for secret in [token, master, appSecret] { #expect(!rows.contains(secret)) }
        }
    }
}
