import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Puts accepted pushes in the queue (`pushes`), durably: a request is answered only after its transaction commits.
/// Concurrent requests are coalesced (``Coalescer``) into one transaction, which:
/// 1. claims each idempotency key, or finds the answer it already has;
/// 2. gives each Live Activity push its timestamp (``ActivityStamps``: the caller's, or one after the last push of its
///    name to the same audience as written);
/// 3. in one statement, lists the names pushed for the first time (`activity_names`), inserts the pushes, each with
///    the APNs body its preparation built (``PushPreparation``), only its timestamp set (``APNsPayload/stamped(_:)``),
///    with its `PUSH_BODY` event (``EventLog``), and records a `push.accepted` audit entry per push (``AuditLog``), so
///    that no push is queued off the record;
/// 4. sets the type of a start whose name was last started as another: what updates and ends of the name are
///    checked against;
/// 5. schedules the ends that starts ask for (`end_after`, `end_at`).
public struct PushIntake: Sendable {
    let coalescer: Coalescer<PushSubmission, PushAcceptance>
    let client: Database
    let logger: Logger
    let now: @Sendable () -> Date

    /// With `preparedStatements` (not through a transaction pooler), a flush's insert and advisory locks are prepared
    /// once per connection.
    public init(
        client: Database, logger: Logger, preparedStatements: Bool = true, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.client = client
        self.logger = logger
        self.now = now
        self.coalescer = Coalescer(maximumFlushes: Self.maximumFlushes) { submissions in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.accept(submissions, on: connection, prepared: preparedStatements, logger: logger, now: now())
            }
        }
    }

    /// Flushes in flight at once. A flush spends most of its time waiting on its statements' round trips and its
    /// commit: `bench/push-intake.sh 10 64` took 1,365 pushes/s with four against 826 with two, and 1,305 with eight,
    /// when every statement was planned for each flush. With the insert prepared, two, four and six take the same
    /// within the host's noise, two spending the least of PostgreSQL per push (larger flushes; docs/performance.md).
    static let maximumFlushes = 4

    /// Queues `submission` (a Live Activity push's timestamp is never a reason to refuse one); a repeated idempotency
    /// key gets its first request's answer.
    public func accept(_ submission: PushSubmission) async throws(StoreError) -> PushAcceptance {
        let acceptance = try await StoreError.mapping(submission, to: self.coalescer)
        // A replay answers the first request's operation.
        if case .accepted(submission.operationID, let pushIDs) = acceptance { PushMetrics.accepted.increment(by: Int64(pushIDs.count)) }
        return acceptance
    }

    /// One request of a flush: a submission, and the later ones in the same flush that repeat its idempotency key,
    /// which get its answer.
    struct Request {
        var submission: PushSubmission
        /// Where its submissions stand in the flush.
        var positions: [Int]

        var key: KeyID? { self.submission.idempotencyKey.map { KeyID(appID: self.submission.appID, key: $0) } }

        /// The flush's submissions as requests, in order, one per idempotency key.
        static func grouping(_ submissions: [PushSubmission]) -> [Request] {
            var requests: [Request] = []
            var byKey: [KeyID: Int] = [:]
            for (position, submission) in submissions.enumerated() {
                let request = Request(submission: submission, positions: [position])
                guard let key = request.key else {
                    requests.append(request)
                    continue
                }
                if let first = byKey[key] {
                    requests[first].positions.append(position)
                } else {
                    byKey[key] = requests.count
                    requests.append(request)
                }
            }
            return requests
        }
    }

    /// An idempotency key, within its app.
    struct KeyID: Hashable {
        var appID: Int64
        var key: String
    }

    /// Accepts `submissions` within the caller's transaction on `connection` (a schedule's firing queues its push so);
    /// with `prepared` (not through a transaction pooler), the insert and the advisory locks are prepared once per
    /// connection.
    static func accept(
        _ submissions: [PushSubmission],
        on connection: PostgresConnection,
        prepared: Bool,
        logger: Logger,
        now: Date
    ) async throws -> [PushAcceptance] {
        let requests = Request.grouping(submissions)
        let replays = try await Self.claimKeys(of: requests, on: connection, logger: logger, now: now)
        let fresh = requests.filter { request in request.key.map { replays[$0] == nil } ?? true }
        let pending = fresh.flatMap { request in
            request.submission.items.map { ActivityStamps.Pending(appID: request.submission.appID, item: $0) }
        }
        let timestamps = try await ActivityStamps.timestamps(
            of: pending, acceptedAt: Int64(now.timeIntervalSince1970), on: connection, prepared: prepared, logger: logger)
        var accepted: [AcceptedPush] = []
        for request in fresh {
            for item in request.submission.items {
                accepted.append(AcceptedPush(item, of: request.submission, timestamp: timestamps[accepted.count], acceptedAt: now))
            }
        }
        if !accepted.isEmpty {
            let names = Self.names(of: accepted)
            let queue = QueuePushes(names: names, pushes: accepted, auditEntries: fresh.flatMap(\.submission.auditEntries), at: now)
            _ = try await queue.rows(on: connection, prepared: prepared, logger: logger)
            try await Self.retype(names, on: connection, logger: logger)
            for (appID, app) in Dictionary(grouping: fresh.map(\.submission), by: \.appID) {
                let endings = app.flatMap(\.endings).map { ($0.scheduleID, $0.schedule) }
                try await ScheduleStore.insert(endings, appID: appID, now: now, on: connection, logger: logger)
            }
        }
        var answers: [PushAcceptance?] = submissions.map { _ in nil }
        for request in requests {
            let answer = request.key.flatMap { replays[$0] }
                ?? .accepted(operationID: request.submission.operationID, pushIDs: request.submission.pushIDs)
            for position in request.positions { answers[position] = answer }
        }
        return answers.compactMap { $0 }
    }

    // MARK: - Idempotency keys

    /// Claims each request's key; returns, for the keys already claimed within the window, their first answers.
    private static func claimKeys(
        of requests: [Request],
        on connection: PostgresConnection,
        logger: Logger,
        now: Date
    ) async throws -> [KeyID: PushAcceptance] {
        var claims: [RawJSON] = []
        var keys: [KeyID] = []
        for request in requests {
            guard let key = request.key else { continue }
            keys.append(key)
            claims.append(.object([
                .init("app_id", .integer(key.appID)), .init("idempotency_key", .string(key.key)),
                .init("operation_id", .string(request.submission.operationID.lowercaseString)),
                .init("push_ids", .string("{" + request.submission.pushIDs.map(\.lowercaseString).joined(separator: ",") + "}")),
            ]))
        }
        guard !claims.isEmpty else { return [:] }
        let cutoff = now.addingTimeInterval(-IdempotencyKeys.window)
        let rows = try await connection.query(
            """
            INSERT INTO push_requests (app_id, idempotency_key, operation_id, push_ids, created_at)
            SELECT app_id, idempotency_key, operation_id, push_ids::uuid[], \(now)
            FROM jsonb_to_recordset(\(RawJSON.array(claims).text)::jsonb)
                 AS r (app_id bigint, idempotency_key text, operation_id uuid, push_ids text)
            ON CONFLICT (app_id, idempotency_key) DO UPDATE SET
                operation_id = EXCLUDED.operation_id, push_ids = EXCLUDED.push_ids, created_at = EXCLUDED.created_at
                WHERE push_requests.created_at < \(cutoff)
            RETURNING app_id, idempotency_key
            """,
            logger: logger
        )
        let fresh = Set(try await rows.decode((Int64, String).self).array().map { KeyID(appID: $0.0, key: $0.1) })
        let replayed = keys.filter { !fresh.contains($0) }
        guard !replayed.isEmpty else { return [:] }
        let answers = try await connection.query(
            """
            SELECT app_id, idempotency_key, operation_id, push_ids FROM push_requests
            WHERE (app_id, idempotency_key) IN (SELECT * FROM unnest(\(replayed.map(\.appID))::bigint[], \(replayed.map(\.key))::text[]))
            """,
            logger: logger
        )
        var stored: [KeyID: PushAcceptance] = [:]
        for try await (appID, key, operationID, pushIDs) in answers.decode((Int64, String, UUID, [UUID]).self) {
            stored[KeyID(appID: appID, key: key)] = .accepted(operationID: operationID, pushIDs: pushIDs)
        }
        return stored
    }

    // MARK: - Rows

    /// One statement: lists the names of the flush's pushes that `activity_names` lacks (``names(of:)``), inserts the
    /// pushes' rows (``PushColumn``), a `PUSH_BODY` event of each for the app's stream (which reads the push object
    /// from its row) and their audit entries, and notifies the workers, who LISTEN (PostgreSQL delivers it when the
    /// transaction commits). Listing a name does not lock one already listed: a name shared by many
    /// activities is no row that every push waits on. Its text is the same for every flush and it reads no table
    /// whose size could change its plan, so, prepared, it is parsed and planned once per connection: for a flush of
    /// six pushes, parsing and planning it took half as long as running it.
    struct QueuePushes: RawRowsStatement {
        static let sql = """
            WITH listed AS (
                     \(NameColumn.insertSelect(into: "activity_names"))
                     FROM jsonb_to_recordset($1::jsonb) AS r (\(NameColumn.recordFields))
                     ON CONFLICT (app_id, name) DO NOTHING),
                 queued AS (
                     \(PushColumn.insertSelect(into: "pushes")) FROM jsonb_to_recordset($2::jsonb) AS r (\(PushColumn.recordFields))
                     RETURNING app_id, push_id, accepted_at),
                 logged AS (
                     INSERT INTO events (app_id, type, occurred_at, push_id)
                     SELECT app_id, '\(EventType.pushBody.rawValue)', accepted_at, push_id FROM queued),
                 audited AS (
                     \(AuditColumn.insertSelect(into: "audit_events")) FROM jsonb_to_recordset($3::jsonb) AS r (\(AuditColumn.recordFields)))
            SELECT pg_notify('\(DispatchStore.channel)', '')
            """
        /// The records of each insert, as JSON arrays.
        var names: String
        var pushes: String
        var auditEntries: String

        init(names: [Name], pushes: [AcceptedPush], auditEntries: [AuditEntry], at now: Date) {
            self.names = RawJSON.array(names.map(\.record.json)).text
            self.pushes = RawJSON.array(pushes.map { push in
                var record = Record<PushColumn>()
                for column in PushColumn.allCases { record.set(column, column.value(of: push)) }
                return record.json
            }).text
            self.auditEntries = RawJSON.array(AuditColumn.records(auditEntries, at: now).map(\.json)).text
        }

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(self.names)
            bindings.append(self.pushes)
            bindings.append(self.auditEntries)
            return bindings
        }
    }

    // MARK: - Names

    /// A name the flush pushes, and its record for `activity_names`, with the type of its last start in the flush.
    struct Name {
        var record: Record<NameColumn>
        var started: Bool
    }

    /// The names of `pushes`' Live Activities, in one order (no deadlocks between flushes listing them).
    private static func names(of pushes: [AcceptedPush]) -> [Name] {
        var startedTypes: [NameKey: String?] = [:]
        for push in pushes {
            guard case .liveActivity(let activity) = push.push.content else { continue }
            let key = NameKey(appID: push.appID, name: activity.name)
            startedTypes[key] = activity.event == .start ? activity.attributesType : startedTypes[key, default: nil]
        }
        return startedTypes.sorted { ($0.key.appID, $0.key.name) < ($1.key.appID, $1.key.name) }.map { key, type in
            var record = Record<NameColumn>()
            for column in NameColumn.allCases { record.set(column, column.value(of: key, startedType: type)) }
            return Name(record: record, started: type != nil)
        }
    }

    /// Sets the type of a name started as another than its stored one, after ``queue(_:names:auditEntries:at:)``
    /// listed it: what its updates and ends are checked against.
    private static func retype(_ names: [Name], on connection: PostgresConnection, logger: Logger) async throws {
        let starts = names.filter(\.started).map(\.record.json)
        guard !starts.isEmpty else { return }
        try await connection.query(
            """
            UPDATE activity_names n SET attributes_type = r.attributes_type
            FROM jsonb_to_recordset(\(RawJSON.array(starts).text)::jsonb) AS r (\(unescaped: NameColumn.recordFields))
            WHERE n.app_id = r.app_id AND n.name = r.name AND n.attributes_type IS DISTINCT FROM r.attributes_type
            """,
            logger: logger
        )
    }

    struct NameKey: Hashable {
        var appID: Int64
        var name: String
    }

    /// The `activity_names` row a name's first push inserts, described once: each case a column, its type in the
    /// insert's JSON record and its value for one name. Its floor is 0 (stamps run ahead of the clock per audience,
    /// never per name) and it has no last push (the console reads a name's newest push from `pushes`).
    enum NameColumn: String, RecordColumn {
        case appID = "app_id", name, lastTimestamp = "last_timestamp", attributesType = "attributes_type"

        var recordType: String {
            switch self {
            case .appID, .lastTimestamp: "bigint"
            case .name, .attributesType: "text"
            }
        }

        /// The column's value for `key`'s name, last started in the flush as `startedType` (`nil`: not started); `nil`
        /// is NULL.
        func value(of key: NameKey, startedType: String?) -> RawJSON? {
            switch self {
            case .appID: .integer(key.appID)
            case .name: .string(key.name)
            case .lastTimestamp: .integer(0)
            case .attributesType: startedType.map(RawJSON.string)
            }
        }
    }
}
