import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Firing due schedules. A worker locks each due schedule's row (`FOR UPDATE SKIP LOCKED`) and, in the same
/// transaction, queues its push through ``PushIntake`` (the Live Activity timestamp stamped now), records the
/// firing and moves the schedule on: each occurrence fires once whatever the number of workers, and a worker killed
/// midway leaves nothing half done.
///
/// What fires where, what is missed and how each schedule moves on is ``SchedulePlan``'s to say; the store hands it
/// what it needs from the database in a few statements per batch, whatever its size: the time zones of each app with a
/// local-time schedule among the app's channels (a channel without a valid zone is in the app's default one), when
/// each zone's clocks read each occurrence in flight, as PostgreSQL's time zone database says (a time skipped by a
/// daylight-saving change is the standard-time reading of it, an hour later on the clock; a repeated time is its
/// second, standard-time, passing), and the zones that already fired each.
extension ScheduleStore {
    /// A due schedule as the firing reads it: what its plan starts from, or why it cannot be planned.
    private struct Due {
        var appID: Int64
        var scheduleID: UUID
        var defaultZone: String
        /// `nil` when no occurrence remains or the schedule cannot be read.
        var schedule: DueSchedule?
        var unreadable: String?

        init(_ row: NamedRow<ScheduleColumn.Selected>) throws {
            self.appID = try row.decode(.appID)
            self.scheduleID = try row.decode(.scheduleID)
            self.defaultZone = try row.decode(.defaultZone)
            let next: Date? = try row.decode(.nextOccurrence)
            let grace: Int = try row.decode(.grace)
            do {
                let schedule = try ScheduleColumn.Selected.schedule(in: row)
                self.schedule = next.map { DueSchedule(schedule: schedule, nextOccurrence: $0, grace: TimeInterval(grace)) }
            } catch {
                self.unreadable = "the schedule cannot be read: \(error)"
            }
        }
    }

    /// What the firing selects of each due schedule.
    private static let dueColumns: [ScheduleColumn.Selected] =
        [.appID, .scheduleID, .nextOccurrence, .grace, .defaultZone] + ScheduleColumn.Selected.scheduleColumns

    /// A due schedule of the batch and its plan.
    private struct Move {
        var due: Due
        var plan: SchedulePlan
    }

    /// Firing `firing` of the batch's move `move`.
    private struct FiringIndex: Hashable {
        var move: Int
        var firing: Int
    }

    /// Fires up to `limit` due schedules in one transaction, their pushes queued through one intake; returns how many it
    /// looked at. Each push is prepared as the Push API prepares it, against what `preparation` reads of its app now.
    public func fireDue(now: Date, limit: Int, preparation: PushPreparationInputs) async throws(StoreError) -> Int {
        try await StoreError.mapping {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: ScheduleColumn.Selected.selectList(Self.dueColumns))
                    FROM schedules s JOIN apps a ON a.id = s.app_id
                    WHERE s.next_fire_at <= \(now)
                    ORDER BY s.next_fire_at
                    LIMIT \(limit)
                    FOR UPDATE OF s SKIP LOCKED
                    """,
                    logger: self.logger
                ).collect()
                let dues = try rows.map { try Due(NamedRow($0)) }
                let inputs = try await Self.inputs(of: dues, from: preparation)
                var moves = try await self.plan(dues, now: now, on: connection)
                let sending = Self.submissions(&moves, inputs: inputs, now: now)
                let pushIDs = try await self.queue(sending, now: now, on: connection)
                try await self.record(moves, pushIDs: pushIDs, now: now, on: connection)
                try await self.finish(moves, now: now, on: connection)
                return rows.count
            }
        }
    }

    /// When the next schedule is due, if any is.
    public func nextDue() async throws(StoreError) -> Date? {
        try await StoreError.mapping {
            try await self.client.query("SELECT min(next_fire_at) FROM schedules WHERE next_fire_at IS NOT NULL", logger: self.logger)
                .decode(Date?.self).array().first ?? nil
        }
    }

    /// What preparing the batch's pushes needs (their Live Activity types, their names' newest live activity channels),
    /// by app: one read per app, not one per schedule.
    private static func inputs(of dues: [Due], from preparation: PushPreparationInputs) async throws -> [Int64: PushPreparation.Inputs] {
        var pushes: [Int64: [Push]] = [:]
        for due in dues {
            guard let push = due.schedule?.schedule.push else { continue }
            pushes[due.appID, default: []].append(push)
        }
        var inputs: [Int64: PushPreparation.Inputs] = [:]
        for (appID, appPushes) in pushes {
            inputs[appID] = try await preparation.read(for: appPushes, appID: appID)
        }
        return inputs
    }

    /// Plans the batch: the zones of each app with a local-time schedule, then when each zone's clocks read each
    /// occurrence in flight and which zones fired which, each in one statement for the whole batch.
    private func plan(_ dues: [Due], now: Date, on connection: PostgresConnection) async throws -> [Move] {
        var zones: [Int64: [String]] = [:]
        var inFlight: [(due: Int, occurrence: Date)] = []
        for (index, due) in dues.enumerated() {
            guard let schedule = due.schedule, schedule.schedule.time.isLocal else { continue }
            if zones[due.appID] == nil {
                zones[due.appID] = try await Self.zones(appID: due.appID, defaultZone: due.defaultZone, on: connection, logger: self.logger).sorted()
            }
            inFlight += schedule.occurrences(at: now).map { (due: index, occurrence: $0) }
        }
        let keys = Set(inFlight.flatMap { due, occurrence in
            (zones[dues[due].appID] ?? []).map { ZonedOccurrence(occurrence: occurrence, zone: $0) }
        })
        let instants = try await Self.instants(of: Array(keys), on: connection, logger: self.logger)
        let fired = try await self.firedZones(of: inFlight, in: dues, on: connection)
        return dues.enumerated().map { index, due in
            guard let schedule = due.schedule else { return Move(due: due, plan: .stopped(due.unreadable)) }
            let plan = SchedulePlan(schedule, at: now, zones: zones[due.appID] ?? [], instants: instants, fired: fired[index] ?? [])
            return Move(due: due, plan: plan)
        }
    }

    /// The zones that already fired each occurrence in flight (`due` an index in `dues`), by due schedule.
    private func firedZones(
        of inFlight: [(due: Int, occurrence: Date)], in dues: [Due], on connection: PostgresConnection
    ) async throws -> [Int: Set<ZonedOccurrence>] {
        guard !inFlight.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT r.i, f.time_zone
            FROM unnest(\(inFlight.map { dues[$0.due].appID })::bigint[], \(inFlight.map { dues[$0.due].scheduleID })::uuid[],
                        \(inFlight.map { $0.occurrence })::timestamptz[]) WITH ORDINALITY AS r (app_id, schedule_id, occurrence, i)
            JOIN schedule_firings f
              ON f.app_id = r.app_id AND f.schedule_id = r.schedule_id AND f.occurrence = r.occurrence AT TIME ZONE 'UTC'
            """,
            logger: self.logger
        ).decode((Int64, String).self).array()
        var fired: [Int: Set<ZonedOccurrence>] = [:]
        for (number, zone) in rows {
            let (due, occurrence) = inFlight[Int(number) - 1]
            fired[due, default: []].insert(ZonedOccurrence(occurrence: occurrence, zone: zone))
        }
        return fired
    }

    /// The pushes of the firings the plans send, each as `POST /api/push` would submit it; a push refused so is
    /// recorded in its plan.
    private static func submissions(
        _ moves: inout [Move], inputs: [Int64: PushPreparation.Inputs], now: Date
    ) -> [(FiringIndex, PushSubmission)] {
        var sending: [(FiringIndex, PushSubmission)] = []
        for (index, move) in moves.enumerated() {
            guard let push = move.due.schedule?.schedule.push else { continue }
            for (number, firing) in move.plan.firings.enumerated() where firing.outcome == .send {
                let zone = firing.zone.isEmpty ? nil : LocalTimeZone(name: firing.zone, isDefault: firing.zone == move.due.defaultZone)
                switch Self.submission(push, appID: move.due.appID, zone: zone, inputs: inputs[move.due.appID] ?? .init(), now: now) {
                case .success(let submission): sending.append((FiringIndex(move: index, firing: number), submission))
                case .failure(let refusal): moves[index].plan.refuse(number, reason: refusal.reason)
                }
            }
        }
        return sending
    }

    /// Why a firing's push was refused, in words.
    private struct Refusal: Error {
        var reason: String
    }

    /// The push prepared as `POST /api/push` prepares it (``PushPreparation``: its content against the app's Live
    /// Activity types and a live activity channel's rules checked again, as they may have changed since the schedule was
    /// created, the payload built, a start's ending scheduled from this firing), or why it is refused, in the API's words.
    private static func submission(
        _ push: Push, appID: Int64, zone: LocalTimeZone?, inputs: PushPreparation.Inputs, now: Date
    ) -> Result<PushSubmission, Refusal> {
        let prepared: [PreparedPush]
        do {
            prepared = try PushPreparation.prepare([push], paths: [""], inputs: inputs, now: now)
        } catch {
            return .failure(Refusal(reason: "refused: \(error.field.message)"))
        }
        var submission = PushSubmission(appID: appID, prepared: prepared, idempotencyKey: nil)
        submission.localTimeZone = zone
        return .success(submission)
    }

    /// Queues the batch's pushes through one intake, within the firing's transaction; returns each firing's push. A
    /// batch's statements are sent unnamed (firings are not the Push API's load), which is safe through a transaction
    /// pooler.
    private func queue(_ sending: [(FiringIndex, PushSubmission)], now: Date, on connection: PostgresConnection) async throws -> [FiringIndex: UUID] {
        guard !sending.isEmpty else { return [:] }
        let answers = try await PushIntake.accept(sending.map { $0.1 }, on: connection, prepared: false, logger: self.logger, now: now)
        var pushIDs: [FiringIndex: UUID] = [:]
        for ((index, _), answer) in zip(sending, answers) {
            switch answer {
            case .accepted(_, let queued):
                pushIDs[index] = queued.first
                PushMetrics.accepted.increment()
            }
        }
        return pushIDs
    }

    /// Records the batch's firings in one statement: each the push it queued, or why none, with its event for the app's
    /// stream (`SCHEDULE_FIRED` or `SCHEDULE_MISSED`).
    private func record(_ moves: [Move], pushIDs: [FiringIndex: UUID], now: Date, on connection: PostgresConnection) async throws {
        var records: [BlimpStore.Record<ScheduleFiringColumn>] = []
        for (index, move) in moves.enumerated() {
            for (number, firing) in move.plan.firings.enumerated() {
                let pushID = pushIDs[FiringIndex(move: index, firing: number)]
                var metadata: Logger.Metadata = ["schedule.id": "\(move.due.scheduleID.lowercaseString)", "time_zone": "\(firing.zone)"]
                if let pushID {
                    metadata["push.id"] = "\(pushID.lowercaseString)"
                    self.logger.debug("schedule fired", metadata: metadata)
                } else if let reason = firing.outcome.reason {
                    metadata["reason"] = "\(reason)"
                    self.logger.warning("schedule occurrence not sent", metadata: metadata)
                } else {
                    continue
                }
                var record = BlimpStore.Record<ScheduleFiringColumn>()
                for column in ScheduleFiringColumn.allCases {
                    record.set(column, column.value(of: firing, appID: move.due.appID, scheduleID: move.due.scheduleID, pushID: pushID, now: now))
                }
                records.append(record)
            }
        }
        guard !records.isEmpty else { return }
        try await connection.query(
            """
            WITH fired AS (
                \(unescaped: ScheduleFiringColumn.insertSelect(into: "schedule_firings"))
                FROM jsonb_to_recordset(\(RawJSON.array(records.map(\.json)).text)::jsonb) AS r (\(unescaped: ScheduleFiringColumn.recordFields))
                ON CONFLICT DO NOTHING
                RETURNING app_id, schedule_id, occurrence, time_zone, push_id, skipped, fired_at)
            INSERT INTO events (app_id, type, occurred_at, push_id, body)
            SELECT app_id, CASE WHEN push_id IS NULL THEN 'SCHEDULE_MISSED' ELSE 'SCHEDULE_FIRED' END, fired_at, push_id,
                   jsonb_strip_nulls(jsonb_build_object(
                       'schedule_id', schedule_id, 'occurrence', to_char(occurrence, 'YYYY-MM-DD"T"HH24:MI:SS'),
                       'time_zone', NULLIF(time_zone, ''), 'reason', skipped))
            FROM fired
            """,
            logger: self.logger)
    }

    /// Moves the batch's schedules on, in one statement (a time as epoch seconds, -1 for none).
    private func finish(_ moves: [Move], now: Date, on connection: PostgresConnection) async throws {
        guard !moves.isEmpty else { return }
        func seconds(_ date: Date?) -> Double { date?.timeIntervalSince1970 ?? -1 }
        try await connection.query(
            """
            UPDATE schedules s
            SET next_occurrence = CASE WHEN r.next < 0 THEN NULL ELSE to_timestamp(r.next) AT TIME ZONE 'UTC' END,
                next_fire_at = CASE WHEN r.fire_at < 0 THEN NULL ELSE to_timestamp(r.fire_at) END,
                last_error = coalesce(NULLIF(r.error, ''), s.last_error),
                last_error_at = CASE WHEN r.error = '' THEN s.last_error_at ELSE \(now) END
            FROM unnest(\(moves.map(\.due.appID))::bigint[], \(moves.map(\.due.scheduleID))::uuid[],
                        \(moves.map { seconds($0.plan.next.nextOccurrence) })::float8[], \(moves.map { seconds($0.plan.next.fireAt) })::float8[],
                        \(moves.map { $0.plan.error ?? "" })::text[]) AS r (app_id, schedule_id, next, fire_at, error)
            WHERE s.app_id = r.app_id AND s.schedule_id = r.schedule_id
            """,
            logger: self.logger)
    }

    /// The distinct time zones of the app's channels, a zone PostgreSQL does not know counting as `defaultZone`, which
    /// is always among them. Skips through `channels_by_time_zone`, one probe per zone.
    private static func zones(appID: Int64, defaultZone: String, on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        try await connection.query(
            """
            WITH RECURSIVE reported (zone) AS (
                (SELECT timezone FROM channels WHERE app_id = \(appID) AND timezone IS NOT NULL ORDER BY timezone LIMIT 1)
                UNION ALL
                SELECT (SELECT c.timezone FROM channels c WHERE c.app_id = \(appID) AND c.timezone > r.zone ORDER BY c.timezone LIMIT 1)
                FROM reported r WHERE r.zone IS NOT NULL)
            SELECT t.name FROM reported r JOIN time_zones t ON t.name = r.zone
            UNION SELECT \(defaultZone)
            """,
            logger: logger
        ).decode(String.self).array()
    }

    /// When each zone's clocks read each occurrence, as PostgreSQL's time zone database says, in one statement.
    private static func instants(
        of keys: [ZonedOccurrence], on connection: PostgresConnection, logger: Logger
    ) async throws -> [ZonedOccurrence: Date] {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT r.i, (r.occurrence AT TIME ZONE 'UTC') AT TIME ZONE r.zone
            FROM unnest(\(keys.map(\.occurrence))::timestamptz[], \(keys.map(\.zone))::text[]) WITH ORDINALITY AS r (occurrence, zone, i)
            """,
            logger: logger
        ).decode((Int64, Date).self).array()
        var instants: [ZonedOccurrence: Date] = [:]
        for (number, instant) in rows { instants[keys[Int(number) - 1]] = instant }
        return instants
    }
}
