import BlimpCore
import BlimpDispatch
import BlimpStore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

/// Workers fire schedules (Scheduler, ScheduleStore+Firing) on the test's clock: each occurrence once under two
/// workers, the grace period, catching up at most once, and local time per time zone across daylight-saving changes.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct ScheduleFiringTests {
    @Test func eachOccurrenceFiresOnceUnderTwoWorkers() async throws {
        try await DispatchHarness.run { harness in
            let devices = try await harness.register(3, name: "match-5")
            let start = harness.clock.now.addingTimeInterval(60)
            let id = try await self.create(
                #"{"scheduled_time": "\#(AirshipDate.format(start))", "recurring": {"cadence": {"type": "hourly", "count": 1}}}"#,
                DispatchHarness.liveActivity("update", "match-5", #", "priority": 5, "content_state": {"home": 1}"#), in: harness)
            try await self.running([harness.worker("w1"), harness.worker("w2")]) {
                for occurrence in 1...3 {
                    // The clock reaches the occurrence (start's whole second, plus an hour for each before it).
                    harness.clock.set(start.addingTimeInterval(Double((occurrence - 1) * 3600) + 1))
                    let fired = try await self.waitForPushes(of: id, count: occurrence, in: harness)
                    #expect(fired.count == occurrence)
                }
            }
            let firings = try await self.firings(of: id, in: harness)
            #expect(firings.count == 3 && firings.allSatisfy { $0.pushID != nil }, "\(firings)")
            for device in devices { #expect(harness.received(device.token).count == 3) }
        }
    }

    @Test func anOccurrencePastTheGracePeriodIsMissedAndARecurrenceCatchesUpOnce() async throws {
        try await DispatchHarness.run { harness in
            _ = try await harness.register(1, name: "match-5")
            let start = harness.clock.now.addingTimeInterval(60)
            let push = DispatchHarness.liveActivity("update", "match-5", #", "priority": 5, "content_state": {"home": 2}"#)
            let once = try await self.create(#"{"scheduled_time": "\#(AirshipDate.format(start))"}"#, push, in: harness)
            let hourly = try await self.create(
                #"{"scheduled_time": "\#(AirshipDate.format(start))", "recurring": {"cadence": {"type": "hourly", "count": 1}}}"#, push, in: harness)
            // Blimp was down for five hours and ten minutes: the one-time schedule is past the app's hour of grace, and of
            // the hourly one's six occurrences only the latest (ten minutes ago) is sent.
            harness.clock.set(start.addingTimeInterval(5 * 3600 + 600))
            try await self.running([harness.worker()]) {
                _ = try await self.waitForPushes(of: hourly, count: 1, in: harness)
                try await self.waitUntil { try await self.firings(of: once, in: harness).count == 1 }
            }
            let missed = try await self.firings(of: once, in: harness)
            #expect(missed.count == 1 && missed[0].pushID == nil && missed[0].skipped?.hasPrefix("missed") == true, "\(missed)")
            let caughtUp = try await self.firings(of: hourly, in: harness)
            #expect(caughtUp.count == 1 && caughtUp[0].occurrence == start.addingTimeInterval(5 * 3600).wholeSeconds, "\(caughtUp)")
            let store = ScheduleStore(client: harness.database, logger: TestDatabase.logger)
            let record = try #require(try await store.schedule(hourly, appID: harness.app.id))
            #expect(record.nextOccurrence == start.addingTimeInterval(6 * 3600).wholeSeconds)
            #expect(try await store.schedule(once, appID: harness.app.id)?.lastError?.hasPrefix("missed") == true)

            // The app's event stream says so, and then that the hourly one was cancelled.
            #expect(try await store.cancel(hourly, appID: harness.app.id, at: harness.clock.now, by: .commandLine))
            let log = EventLog(client: harness.database, logger: TestDatabase.logger)
            var schedules: [StreamedEvent] = []
            let deadline = ContinuousClock.now + .seconds(30)
            while schedules.count < 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                schedules = try await log.events(appID: harness.app.id, after: .start, limit: 100)
                    .filter { [.scheduleFired, .scheduleMissed, .scheduleCancelled].contains($0.type) }
            }
            #expect(schedules.map(\.type).sorted { $0.rawValue < $1.rawValue } == [.scheduleCancelled, .scheduleFired, .scheduleMissed])
            let fired = try #require(schedules.first { $0.type == .scheduleFired })
            #expect(fired.pushID == caughtUp[0].pushID && fired.body["schedule_id"] == .string(hourly.lowercaseString))
            #expect(fired.body["occurrence"] == .string(AirshipDate.format(start.addingTimeInterval(5 * 3600))), "\(fired.body.text)")
            let notSent = try #require(schedules.first { $0.type == .scheduleMissed })
            #expect(notSent.body["schedule_id"] == .string(once.lowercaseString) && notSent.pushID == nil)
            guard case .string(let reason)? = notSent.body["reason"] else { Issue.record("no reason: \(notSent.body.text)"); return }
            #expect(reason.hasPrefix("missed"))
            #expect(schedules.last?.type == .scheduleCancelled && schedules.last?.body["schedule_id"] == .string(hourly.lowercaseString))
        }
    }

    /// Each push of a batch is checked against its own name's live activity channel when it fires: one to a name with a
    /// live channel is queued through it, one whose channel APNs deleted is refused, and the refusal is recorded.
    @Test func firingChecksEachPushAgainstItsNamesLiveActivityChannel() async throws {
        try await DispatchHarness.run { harness in
            let now = harness.clock.now
            try await harness.database.query(
                """
                INSERT INTO live_activity_channels (app_id, name, apns_channel_id, storage_policy, created_at, deleted_at, deleted_reason)
                VALUES (\(harness.app.id), 'broadcast', 'live-channel', 0, \(now), NULL, NULL),
                       (\(harness.app.id), 'gone', 'deleted-channel', 0, \(now), \(now), 'apns')
                """,
                logger: TestDatabase.logger)
            let due = #"{"scheduled_time": "\#(AirshipDate.format(now.addingTimeInterval(60)))"}"#
            func update(_ name: String) -> String { DispatchHarness.liveActivity("update", name, #", "priority": 5, "content_state": {"home": 1}"#) }
            let live = try await self.create(due, update("broadcast"), in: harness)
            let gone = try await self.create(due, update("gone"), in: harness)
            harness.clock.set(now.addingTimeInterval(61))
            let looked = try await ScheduleStore(client: harness.database, logger: TestDatabase.logger).fireDue(
                now: harness.clock.now, limit: 10, preparation: .init(client: harness.database, logger: TestDatabase.logger))
            #expect(looked == 2)
            let published = try #require(try await self.firings(of: live, in: harness).first?.pushID)
            let channel = try await harness.database.query(
                "SELECT broadcast_channel_id FROM pushes WHERE push_id = \(published)", logger: TestDatabase.logger
            ).decode(String?.self).reduce(into: []) { $0.append($1) }
            #expect(channel == ["live-channel"])
            let refused = try await self.firings(of: gone, in: harness)
            #expect(refused.count == 1 && refused[0].pushID == nil && refused[0].skipped?.hasPrefix("refused") == true, "\(refused)")
        }
    }

    /// A push is checked against the app's Live Activity types when it fires, not only when it was scheduled: a type
    /// declared since then that refuses its content refuses the firing, in the API's words.
    @Test func firingChecksThePushAgainstTheTypesDeclaredSinceItWasScheduled() async throws {
        try await DispatchHarness.run { harness in
            let now = harness.clock.now
            let update = DispatchHarness.liveActivity(
                "update", "match-5", #", "priority": 5, "attributes_type": "MatchAttributes", "content_state": {"home": 1}"#)
            let id = try await self.create(#"{"scheduled_time": "\#(AirshipDate.format(now.addingTimeInterval(60)))"}"#, update, in: harness)
            let type = try LiveActivityType.parse(
                try RawJSONParser.parse(#"{"example": {"attributes": {"team": "Foxes"}, "content_state": {"home": "one"}}}"#.utf8), name: "MatchAttributes")
            let types = LiveActivityTypeStore(client: harness.database, logger: TestDatabase.logger)
            _ = try await types.save(type, appID: harness.app.id, now: now, by: .commandLine, forced: false)
            _ = try await ScheduleStore(client: harness.database, logger: TestDatabase.logger).fireDue(
                now: now.addingTimeInterval(61), limit: 10, preparation: .init(client: harness.database, logger: TestDatabase.logger))
            let refused = try await self.firings(of: id, in: harness)
            #expect(refused.count == 1 && refused[0].pushID == nil, "\(refused)")
            #expect(refused.first?.skipped?.contains("live activity type 'MatchAttributes'") == true, "\(refused)")
        }
    }

    /// A one-time schedule of a start with `end_after: 6`: when it fires, the start goes to the push-to-start token and,
    /// in the same transaction, the end of its name is scheduled 6 s later; once the activity reports its update token,
    /// the end reaches it when the clock gets there.
    @Test func aScheduledStartEndsAfterItsEndAfter() async throws {
        try await DispatchHarness.run { harness in
            let device = try #require(try await harness.register(1, name: nil, startToken: "MatchAttributes").first)
            let due = harness.clock.now.addingTimeInterval(60).wholeSeconds
            let start = DispatchHarness.liveActivity(
                "start", "match-5",
                #", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes"}, "content_state": {"home": 0}, "alert": {"title": "Kick-off"}, "end_after": 6"#)
            let id = try await self.create(#"{"scheduled_time": "\#(AirshipDate.format(due))"}"#, start, in: harness)
            let startToken = try #require(try await harness.database.query(
                "SELECT token FROM push_to_start_tokens WHERE channel_id = \(device.channelID)", logger: TestDatabase.logger
            ).decode(String.self).collect().first)
            let updateToken = SimulatorHarness.randomToken()
            try await self.running([harness.worker()]) {
                harness.clock.set(due.addingTimeInterval(1))
                let firedAt = harness.clock.now
                _ = try await self.waitForPushes(of: id, count: 1, in: harness)
                let started = try #require(harness.received(startToken).first)
                #expect(started.payload.contains(#""event":"start""#) && !started.payload.contains("end_after"), "\(started.payload)")

                // The end waits for its time, 6 s after the firing (whole seconds, rounded up).
                let end = try #require(try await harness.database.query(
                    "SELECT schedule_id, next_fire_at FROM schedules WHERE name = 'end of match-5'", logger: TestDatabase.logger
                ).decode((UUID, Date).self).collect().first)
                #expect(end.1 == firedAt.addingTimeInterval(6).roundedUpToSeconds, "\(end.1)")
                #expect(try await self.firings(of: end.0, in: harness).isEmpty)

                // The activity reports its update token, as the SDK does once iOS started it.
                try await harness.channels.apply(
                    CheckedChannelBatch(
                        tags: TagOperations(), attributes: [],
                        liveActivities: [.setActivity(name: "match-5", activityID: UUID().uuidString, token: updateToken, startedAt: harness.clock.now,
                                                      actionMilliseconds: Int64(harness.clock.now.timeIntervalSince1970 * 1000))]),
                    channelID: device.channelID, appID: harness.app.id)
                harness.clock.set(end.1.addingTimeInterval(1))
                _ = try await self.waitForPushes(of: end.0, count: 1, in: harness)
                let ended = try #require(harness.received(updateToken).first)
                #expect(ended.payload.contains(#""event":"end""#), "\(ended.payload)")
                // The two APNs timestamps, the start's and the end's, tell the same 6 s apart (7 with the rounding).
                let gap = try Self.apsTimestamp(ended.payload) - Self.apsTimestamp(started.payload)
                #expect((6...7).contains(gap), "\(started.payload) then \(ended.payload)")
            }
        }
    }

    /// Devices in Berlin, New York and a zone PostgreSQL does not know (the app's default, UTC): a local-time schedule
    /// at 02:30 on the day New York skips from 02:00 to 03:00 fires in Berlin at 01:30 UTC, in UTC at 02:30 and in New
    /// York at 07:30 (the standard-time reading, 03:30 on its clocks), each push to its zone's devices only. One at
    /// 01:30 on the day New York repeats that hour fires there at its second passing (06:30 UTC). The clock moves from
/// one zone's time to the next, as it would: a jump past the app's hour of grace would miss them.
    @Test func localTimeFiresInEachTimeZoneAcrossDaylightSavingChanges() async throws {
        try await DispatchHarness.run { harness in
            harness.clock.set(Self.utc("2026-03-07T12:00:00"))
            let devices = try await harness.register(3, name: nil)
            var addresses: [String] = []
            for (device, zone) in zip(devices, ["Europe/Berlin", "America/New_York", "Mars/Olympus"]) {
                let address = try await harness.database.query(
                    "UPDATE channels SET timezone = \(zone) WHERE channel_id = \(device.channelID) RETURNING push_address", logger: TestDatabase.logger
                ).decode(String.self).collect()
                addresses.append(try #require(address.first))
            }
            let alert = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "Kick-off"}}"#
            let gap = try await self.create(#"{"local_scheduled_time": "2026-03-08T02:30:00"}"#, alert, in: harness)
            let repeated = try await self.create(#"{"local_scheduled_time": "2026-11-01T01:30:00"}"#, alert, in: harness)
            try await self.running([harness.worker()]) {
                // Berlin's device first, then the unknown zone's, then New York's.
                var reached: Set<Int> = []
                for (step, (time, device)) in [("2026-03-08T01:30:01", 0), ("2026-03-08T02:30:01", 2), ("2026-03-08T07:30:01", 1)].enumerated() {
                    harness.clock.set(Self.utc(time))
                    _ = try await self.waitForPushes(of: gap, count: step + 1, in: harness)
                    reached.insert(device)
                    for (index, address) in addresses.enumerated() {
                        #expect(harness.received(address).count == (reached.contains(index) ? 1 : 0), "step \(step), device \(index)")
                    }
                }
                // Berlin (00:30 UTC) and UTC fire; New York's next firing is its second 01:30, in EST (06:30 UTC), not the
                // first, in EDT (05:30 UTC).
                harness.clock.set(Self.utc("2026-11-01T00:30:01"))
                _ = try await self.waitForPushes(of: repeated, count: 1, in: harness)
                harness.clock.set(Self.utc("2026-11-01T01:30:01"))
                _ = try await self.waitForPushes(of: repeated, count: 2, in: harness)
                let due = try await harness.database.query(
                    "SELECT next_fire_at FROM schedules WHERE schedule_id = \(repeated)", logger: TestDatabase.logger
                ).decode(Date?.self).collect()
                #expect(due == [Self.utc("2026-11-01T06:30:00")])
                harness.clock.set(Self.utc("2026-11-01T06:30:01"))
                _ = try await self.waitForPushes(of: repeated, count: 3, in: harness)
            }
            let zones = try await self.firings(of: gap, in: harness).map(\.zone)
            #expect(zones == ["Europe/Berlin", "UTC", "America/New_York"])
        }
    }

    // MARK: - Helpers

    private func create(_ schedule: String, _ push: String, in harness: DispatchHarness) async throws -> UUID {
        let object = try RawJSONParser.parse(#"{"schedule": \#(schedule), "push": \#(push)}"#.utf8)
        let checked = try ScheduledPush(object, at: "", now: harness.clock.now)
        let store = ScheduleStore(client: harness.database, logger: TestDatabase.logger)
        return try #require(try await store.create([checked], appID: harness.app.id, now: harness.clock.now, by: .commandLine).first)
    }

    struct Firing: Sendable {
        var occurrence: Date
        var zone: String
        var pushID: UUID?
        var skipped: String?
    }

    private func firings(of schedule: UUID, in harness: DispatchHarness) async throws -> [Firing] {
        try await harness.database.query(
            """
            SELECT occurrence AT TIME ZONE 'UTC', time_zone, push_id, skipped FROM schedule_firings
            WHERE schedule_id = \(schedule) ORDER BY fired_at, occurrence, time_zone
            """,
            logger: TestDatabase.logger
        ).decode((Date, String, UUID?, String?).self).collect().map { Firing(occurrence: $0.0, zone: $0.1, pushID: $0.2, skipped: $0.3) }
    }

    /// Waits until the schedule has fired `count` pushes and each is finished; returns them.
    private func waitForPushes(of schedule: UUID, count: Int, in harness: DispatchHarness) async throws -> [UUID] {
        var pushes: [UUID] = []
        try await self.waitUntil {
            pushes = try await self.firings(of: schedule, in: harness).compactMap(\.pushID)
            guard pushes.count >= count else { return false }
            return try await pushes.asyncMap { try await harness.report($0) }.allSatisfy(\.state.isFinished)
        }
        return pushes
    }

    private func waitUntil(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<600 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("not reached in 60 s")
    }

    private func running(_ workers: [Worker], _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in workers { group.addTask { try await worker.run() } }
            defer { group.cancelAll() }
            try await body()
        }
    }

    private static func utc(_ text: String) -> Date { AirshipDate.parse(text)! }

    /// The `aps.timestamp` of an APNs payload.
    private static func apsTimestamp(_ payload: String) throws -> Int64 {
        let digits = try #require(payload.split(separator: #""timestamp":"#).dropFirst().first).prefix { $0.isNumber }
        return try #require(Int64(digits))
    }
}

extension Date {
    /// Truncated to the second, as a schedule's times are.
    var wholeSeconds: Date { Date(timeIntervalSince1970: self.timeIntervalSince1970.rounded(.down)) }
    /// Rounded up to the second, as an ending's time is.
    var roundedUpToSeconds: Date { Date(timeIntervalSince1970: self.timeIntervalSince1970.rounded(.up)) }
}
