import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// A change by a person or a token and its audit entry are kept together or not at all: while the audit trail refuses
/// every insert (a trigger), schedules, Live Activity types and broadcast channels stay as they were; once it takes
/// them again, each change comes with its entry.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct AuditedChangeTests {
    @Test func aChangeWhoseEntryCannotBeRecordedIsNotKept() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: ServerKey.generate().key)
            let schedules = ScheduleStore(client: client, logger: TestDatabase.logger)
            let types = LiveActivityTypeStore(client: client, logger: TestDatabase.logger)
            let channels = LiveActivityChannelStore(client: client, logger: TestDatabase.logger)
            let origin = AuditOrigin(actor: .adminToken, address: "203.0.113.5")
            let now = Date()
            let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "Kick-off"}}"#
            let due = AirshipDate.format(now.addingTimeInterval(3600))
            let schedule = try ScheduledPush(
                RawJSONParser.parse(#"{"schedule": {"scheduled_time": "\#(due)"}, "push": \#(push)}"#.utf8), at: "", now: now)
            let type = try LiveActivityType.parse(
                RawJSONParser.parse(#"{"example": {"attributes": {"venue": "A"}, "content_state": {"score": 1}}}"#.utf8), name: "MatchAttributes")
            let channel = LiveActivityChannel(name: "final", apnsChannelID: "Y2hhbm5lbA==", storagePolicy: .noMessageStored, createdAt: now)
            let kept = try #require(try await schedules.create([schedule], appID: app.id, now: now, by: origin).first)

            try await client.query(
                """
                CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$;
                """,
                logger: TestDatabase.logger)
            try await client.query(
                "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_audit()",
                logger: TestDatabase.logger)
            await #expect(throws: StoreError.self) { try await schedules.create([schedule], appID: app.id, now: now, by: origin) }
            await #expect(throws: StoreError.self) { try await schedules.replace(kept, with: schedule, appID: app.id, now: now, by: origin) }
            await #expect(throws: StoreError.self) { try await schedules.setPaused(kept, true, appID: app.id, now: now, by: origin) }
            await #expect(throws: StoreError.self) { try await schedules.cancel(kept, appID: app.id, at: now, by: origin) }
            await #expect(throws: StoreError.self) { try await types.save(type, appID: app.id, now: now, by: origin, forced: false) }
            await #expect(throws: StoreError.self) { try await channels.insert(channel, appID: app.id, by: origin) }
            #expect(try await schedules.list(appID: app.id, limit: 10, start: nil).records.map(\.scheduleID) == [kept])
            #expect(try await schedules.schedule(kept, appID: app.id)?.paused == false)
            #expect(try await types.list(appID: app.id).isEmpty)
            #expect(try await channels.live(name: "final", appID: app.id) == nil)

            try await client.query("DROP TRIGGER refuse_audit ON audit_events", logger: TestDatabase.logger)
            #expect(try await types.save(type, appID: app.id, now: now, by: origin, forced: false))
            try await channels.insert(channel, appID: app.id, by: origin)
            #expect(try await channels.markDeleted(channel.apnsChannelID, appID: app.id, reason: .admin, at: now, by: origin))
            #expect(try await types.delete("MatchAttributes", appID: app.id, at: now, by: origin))
            #expect(try await schedules.setPaused(kept, true, appID: app.id, now: now, by: origin))
            #expect(try await schedules.cancel(kept, appID: app.id, at: now, by: origin))
            #expect(try await !schedules.cancel(kept, appID: app.id, at: now, by: origin))
            let entries = try await AuditLog(client: client, logger: TestDatabase.logger)
                .list(.app(app.id), filter: AuditFilter(), limit: 20).records.filter { $0.entry.address == origin.address }
            // Each change once, with its entry.
            let expected: [AuditAction] = [
                .scheduleCreated, .liveActivityTypeSaved, .broadcastChannelCreated, .broadcastChannelDeleted, .liveActivityTypeDeleted,
                .schedulePaused, .scheduleCancelled,
            ]
            #expect(entries.map(\.entry.action.rawValue).sorted() == expected.map(\.rawValue).sorted())
        }
    }
}
