import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Puts accepted pushes in the queue (`pushes`), durably: a request is answered only after its transaction commits.
/// Concurrent requests are coalesced (``Coalescer``) into one transaction, which:
/// 1. claims each idempotency key, or finds the answer it already has;
/// 2. locks the names of the Live Activity pushes and stamps each a timestamp newer than the name's last one
///    (`activity_names`), refusing a request whose own timestamp is not newer;
/// 3. inserts the pushes, each with the APNs body its preparation built (``PushPreparation``), only its timestamp set
///    (``APNsPayload/stamped(_:)``), and moves the names' last timestamps on;
/// 4. schedules the ends that starts ask for (`end_after`, `end_at`);
/// 5. records a `push.accepted` audit entry per push (``AuditLog``), so that no push is queued off the record.
public struct PushIntake: Sendable {
    let coalescer: Coalescer<PushSubmission, PushAcceptance>
    let client: PostgresClient
    let logger: Logger
    let now: @Sendable () -> Date

    public init(client: PostgresClient, logger: Logger, now: @escaping @Sendable () -> Date = Date.init) {
        self.client = client
        self.logger = logger
        self.now = now
        self.coalescer = Coalescer { submissions in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.accept(submissions, on: connection, logger: logger, now: now())
            }
        }
    }

    /// Queues `submission`, or says why not.
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

    /// Accepts `submissions` within the caller's transaction on `connection` (a schedule's firing queues its push so).
    static func accept(
        _ submissions: [PushSubmission],
        on connection: PostgresConnection,
        logger: Logger,
        now: Date
    ) async throws -> [PushAcceptance] {
        let requests = Request.grouping(submissions)
        let replays = try await Self.claimKeys(of: requests, on: connection, logger: logger, now: now)
        var names = try await Self.lastTimestamps(of: requests, on: connection, logger: logger)
        var moves: [NameKey: NameMove] = [:]
        let acceptedAt = Int64(now.timeIntervalSince1970)
        var accepted: [AcceptedPush] = []
        var refusedKeys: [KeyID] = []
        var answers: [(position: Int, answer: PushAcceptance)] = []
        var endings: [(appID: Int64, scheduleID: UUID, schedule: ScheduledPush)] = []
        var audit: [AuditEntry] = []
        for request in requests {
            let answer: PushAcceptance
            if let key = request.key, let replay = replays[key] {
                answer = replay
            } else {
                switch Self.stamp(request.submission, last: names, now: acceptedAt) {
                case .success(let stamped):
                    accepted += stamped.pushes.map { AcceptedPush($0.item, of: request.submission, timestamp: $0.timestamp, acceptedAt: now) }
                    endings += request.submission.endings.map { (request.submission.appID, $0.scheduleID, $0.schedule) }
                    audit += request.submission.auditEntries
                    moves.merge(stamped.moves) { $1 }
                    for (key, move) in stamped.moves { names[key] = move.last }
                    answer = .accepted(operationID: request.submission.operationID, pushIDs: request.submission.pushIDs)
                case .failure(let refusal):
                    answer = refusal.acceptance
                    if let key = request.key { refusedKeys.append(key) }
                }
            }
            answers += request.positions.map { ($0, answer) }
        }
        if !refusedKeys.isEmpty {
            // A refused request keeps no key: a retry is judged again.
            try await connection.query(
                """
                DELETE FROM push_requests WHERE (app_id, idempotency_key) IN
                    (SELECT * FROM unnest(\(refusedKeys.map(\.appID))::bigint[], \(refusedKeys.map(\.key))::text[]))
                """,
                logger: logger
            )
        }
        if !accepted.isEmpty {
            try await connection.query(Self.insertPushes(accepted), logger: logger)
            try await connection.query(Self.moveNames(moves), logger: logger)
            try await AuditLog.record(audit, at: now, on: connection, logger: logger)
            for (appID, app) in Dictionary(grouping: endings, by: \.appID) {
                try await ScheduleStore.insert(app.map { ($0.scheduleID, $0.schedule) }, appID: appID, now: now, on: connection, logger: logger)
            }
            // Workers LISTEN; PostgreSQL delivers this when the transaction commits.
            try await connection.query("SELECT pg_notify(\(DispatchStore.channel), '')", logger: logger)
        }
        return answers.sorted { $0.position < $1.position }.map(\.answer)
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

    // MARK: - Timestamps by name

    struct NameKey: Hashable {
        var appID: Int64
        var name: String
    }

    /// A name's new last timestamp, and the push that moved it there.
    struct NameMove {
        var last: Int64
        var pushID: UUID
        /// The `attributes_type` of the name's last start among the moves; `nil` keeps the name's.
        var startedType: String?
    }

    /// The last accepted timestamp of every name the submissions' Live Activity pushes use, locked until commit.
    private static func lastTimestamps(
        of requests: [Request],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [NameKey: Int64] {
        var keys = Set<NameKey>()
        for request in requests {
            for item in request.submission.items {
                if case .liveActivity(let activity) = item.push.content { keys.insert(NameKey(appID: request.submission.appID, name: activity.name)) }
            }
        }
        guard !keys.isEmpty else { return [:] }
        let sorted = keys.sorted { ($0.appID, $0.name) < ($1.appID, $1.name) }  // one lock order, no deadlocks
        let rows = try await connection.query(
            """
            SELECT app_id, name, last_timestamp FROM activity_names
            WHERE (app_id, name) IN (SELECT * FROM unnest(\(sorted.map(\.appID))::bigint[], \(sorted.map(\.name))::text[]))
            ORDER BY app_id, name FOR UPDATE
            """,
            logger: logger
        )
        var names: [NameKey: Int64] = [:]
        for try await (appID, name, last) in rows.decode((Int64, String, Int64).self) {
            names[NameKey(appID: appID, name: name)] = last
        }
        return names
    }

    /// A submission's pushes with their timestamps, and its names' last timestamps moved on.
    struct Stamped {
        var pushes: [(item: PushSubmission.Item, timestamp: Int64?)]
        var moves: [NameKey: NameMove]
    }

    struct Refusal: Error {
        var acceptance: PushAcceptance
    }

    /// Each Live Activity push's timestamp: its own, which must be newer than its name's last, or the acceptance
    /// second, moved past the last when that is not newer.
    static func stamp(_ submission: PushSubmission, last names: [NameKey: Int64], now: Int64) -> Result<Stamped, Refusal> {
        var stamped = Stamped(pushes: [], moves: [:])
        for (index, item) in submission.items.enumerated() {
            guard case .liveActivity(let activity) = item.push.content else {
                stamped.pushes.append((item, nil))
                continue
            }
            let key = NameKey(appID: submission.appID, name: activity.name)
            let last = stamped.moves[key]?.last ?? names[key]
            let timestamp: Int64
            if let given = activity.timestamp {
                if let last, given <= last {
                    return .failure(Refusal(acceptance: .staleTimestamp(pushIndex: index, name: activity.name, timestamp: given, last: last)))
                }
                timestamp = given
            } else {
                timestamp = max(now, (last ?? 0) + 1)
            }
            stamped.pushes.append((item, timestamp))
            let startedType = activity.event == .start ? activity.attributesType : stamped.moves[key]?.startedType
            stamped.moves[key] = NameMove(last: timestamp, pushID: item.pushID, startedType: startedType)
        }
        return .success(stamped)
    }

    // MARK: - Rows

    /// The pushes' rows (``PushColumn``), in one statement.
    private static func insertPushes(_ pushes: [AcceptedPush]) -> PostgresQuery {
        PushColumn.insert(into: "pushes", pushes.map { push in
            var record = Record<PushColumn>()
            for column in PushColumn.allCases { record.set(column, column.value(of: push)) }
            return record
        })
    }

    private static func moveNames(_ moves: [NameKey: NameMove]) -> PostgresQuery {
        let sorted = moves.sorted { ($0.key.appID, $0.key.name) < ($1.key.appID, $1.key.name) }
        let records = sorted.map { key, move in
            var record = Record<NameColumn>()
            for column in NameColumn.allCases { record.set(column, column.value(of: key, move)) }
            return record
        }
        return NameColumn.insert(
            into: "activity_names", records,
            suffix: """
                ON CONFLICT (app_id, name) DO UPDATE SET
                    last_timestamp = EXCLUDED.last_timestamp, last_push_id = EXCLUDED.last_push_id,
                    attributes_type = coalesce(EXCLUDED.attributes_type, activity_names.attributes_type)
                """)
    }

    /// The `activity_names` row a move writes, described once: each case a column, its type in the insert's JSON
    /// record and its value for one move.
    enum NameColumn: String, RecordColumn {
        case appID = "app_id", name, lastTimestamp = "last_timestamp", lastPushID = "last_push_id", attributesType = "attributes_type"

        var recordType: String {
            switch self {
            case .appID, .lastTimestamp: "bigint"
            case .lastPushID: "uuid"
            case .name, .attributesType: "text"
            }
        }

        /// The column's value for the move of `key`'s name; `nil` is NULL.
        func value(of key: NameKey, _ move: NameMove) -> RawJSON? {
            switch self {
            case .appID: .integer(key.appID)
            case .name: .string(key.name)
            case .lastTimestamp: .integer(move.last)
            case .lastPushID: .string(move.pushID.lowercaseString)
            case .attributesType: move.startedType.map(RawJSON.string)
            }
        }
    }
}
