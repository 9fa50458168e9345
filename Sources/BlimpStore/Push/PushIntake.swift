import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// Puts accepted pushes in the queue (`pushes`), durably: a request is answered only after its transaction commits.
/// Concurrent requests are coalesced (``Coalescer``) into one transaction, which:
/// 1. claims each idempotency key, or finds the answer it already has;
/// 2. locks the names of the Live Activity pushes and stamps each a timestamp newer than the name's last one
///    (`activity_names`), refusing a request whose own timestamp is not newer;
/// 3. inserts the pushes, each with the APNs body a worker will send, and moves the names' last timestamps on.
public struct PushIntake: Sendable {
    let coalescer: Coalescer<PushSubmission, PushAcceptance>
    let client: PostgresClient
    let logger: Logger
    let now: @Sendable () -> Date

    /// How long an idempotency key returns its first answer.
    public static let idempotencyWindow: TimeInterval = 24 * 3600

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

    /// Deletes idempotency keys older than ``idempotencyWindow`` (``Janitor`` calls it); returns how many went.
    public func deleteExpiredKeys() async throws(StoreError) -> Int {
        let cutoff = self.now().addingTimeInterval(-Self.idempotencyWindow)
        return try await StoreError.mapping {
            let rows = try await self.client.query(
                "DELETE FROM push_requests WHERE created_at < \(cutoff) RETURNING 1", logger: self.logger)
            return try await rows.collect().count
        }
    }

    private static func accept(
        _ submissions: [PushSubmission],
        on connection: PostgresConnection,
        logger: Logger,
        now: Date
    ) async throws -> [PushAcceptance] {
        var outcomes = [PushAcceptance?](repeating: nil, count: submissions.count)
        let keyed = try await Self.claimKeys(submissions, outcomes: &outcomes, on: connection, logger: logger, now: now)
        var names = try await Self.lastTimestamps(of: submissions, on: connection, logger: logger)
        let acceptedAt = Int64(now.timeIntervalSince1970)
        var rows: [RawJSON] = []
        var refusedKeys: [(appID: Int64, key: String)] = []
        for (index, submission) in submissions.enumerated() where outcomes[index] == nil {
            if submission.idempotencyKey != nil, !keyed[index] { continue }  // a repeat within this batch
            switch Self.stamp(submission, names: names, now: acceptedAt) {
            case .success(let stamped):
                for (pushIndex, push) in submission.pushes.enumerated() {
                    rows.append(Self.row(submission, pushIndex, push, timestamp: stamped.timestamps[pushIndex], acceptedAt: now))
                }
                names.merge(stamped.names) { $1 }
                outcomes[index] = .accepted(operationID: submission.operationID, pushIDs: submission.pushIDs)
            case .failure(let refusal):
                outcomes[index] = refusal.acceptance
                if let key = submission.idempotencyKey { refusedKeys.append((submission.appID, key)) }
            }
        }
        for (index, submission) in submissions.enumerated() where outcomes[index] == nil {
            // A key repeated within this batch: the answer of its first request.
            let first = submissions.firstIndex { $0.appID == submission.appID && $0.idempotencyKey == submission.idempotencyKey }!
            outcomes[index] = outcomes[first]
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
        if !rows.isEmpty {
            try await connection.query(Self.insertPushes(RawJSON.array(rows).text, acceptedAt: now), logger: logger)
            try await connection.query(Self.moveNames(names.filter { $0.value.moved }), logger: logger)
            // Workers LISTEN; PostgreSQL delivers this when the transaction commits.
            try await connection.query("SELECT pg_notify(\(DispatchStore.channel), '')", logger: logger)
        }
        return outcomes.map { $0! }
    }

    // MARK: - Idempotency keys

    /// Claims the first occurrence of each key; a key already claimed within the window answers its first answer.
    /// Returns which submissions hold a key they claimed.
    private static func claimKeys(
        _ submissions: [PushSubmission],
        outcomes: inout [PushAcceptance?],
        on connection: PostgresConnection,
        logger: Logger,
        now: Date
    ) async throws -> [Bool] {
        var claimed = [Bool](repeating: false, count: submissions.count)
        var seen = Set<String>()
        var claims: [RawJSON] = []
        for (index, submission) in submissions.enumerated() {
            guard let key = submission.idempotencyKey else { continue }
            guard seen.insert("\(submission.appID)/\(key)").inserted else { continue }
            claimed[index] = true
            claims.append(.object([
                .init("app_id", .integer(submission.appID)), .init("idempotency_key", .string(key)),
                .init("operation_id", .string(submission.operationID.lowercaseString)),
                .init("push_ids", .string("{" + submission.pushIDs.map(\.lowercaseString).joined(separator: ",") + "}")),
            ]))
        }
        guard !claims.isEmpty else { return claimed }
        let cutoff = now.addingTimeInterval(-Self.idempotencyWindow)
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
        let fresh = Set(try await rows.decode((Int64, String).self).array().map { "\($0.0)/\($0.1)" })
        var replayed: [(Int, Int64, String)] = []
        for (index, submission) in submissions.enumerated() where claimed[index] {
            let key = submission.idempotencyKey!
            if !fresh.contains("\(submission.appID)/\(key)") {
                claimed[index] = false
                replayed.append((index, submission.appID, key))
            }
        }
        guard !replayed.isEmpty else { return claimed }
        let answers = try await connection.query(
            """
            SELECT app_id, idempotency_key, operation_id, push_ids FROM push_requests
            WHERE (app_id, idempotency_key) IN (SELECT * FROM unnest(\(replayed.map(\.1))::bigint[], \(replayed.map(\.2))::text[]))
            """,
            logger: logger
        )
        var stored: [String: PushAcceptance] = [:]
        for try await (appID, key, operationID, pushIDs) in answers.decode((Int64, String, UUID, [UUID]).self) {
            stored["\(appID)/\(key)"] = .accepted(operationID: operationID, pushIDs: pushIDs)
        }
        for (index, appID, key) in replayed { outcomes[index] = stored["\(appID)/\(key)"] }
        return claimed
    }

    // MARK: - Timestamps by name

    struct NameKey: Hashable {
        var appID: Int64
        var name: String
    }

    struct NameState {
        var last: Int64
        var pushID: UUID?
        var moved = false
    }

    /// The last accepted timestamp of every name the submissions' Live Activity pushes use, locked until commit.
    private static func lastTimestamps(
        of submissions: [PushSubmission],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [NameKey: NameState] {
        var keys = Set<NameKey>()
        for submission in submissions {
            for push in submission.pushes {
                if case .liveActivity(let activity) = push.content { keys.insert(NameKey(appID: submission.appID, name: activity.name)) }
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
        var names: [NameKey: NameState] = [:]
        for try await (appID, name, last) in rows.decode((Int64, String, Int64).self) {
            names[NameKey(appID: appID, name: name)] = NameState(last: last)
        }
        return names
    }

    struct Stamped {
        var timestamps: [Int64?]
        var names: [NameKey: NameState]
    }

    struct Refusal: Error {
        var acceptance: PushAcceptance
    }

    /// Each Live Activity push's timestamp: its own, which must be newer than its name's last, or the acceptance
    /// second, moved past the last when that is not newer.
    static func stamp(_ submission: PushSubmission, names: [NameKey: NameState], now: Int64) -> Result<Stamped, Refusal> {
        var stamped = Stamped(timestamps: [], names: [:])
        for (index, push) in submission.pushes.enumerated() {
            guard case .liveActivity(let activity) = push.content else {
                stamped.timestamps.append(nil)
                continue
            }
            let key = NameKey(appID: submission.appID, name: activity.name)
            let last = (stamped.names[key] ?? names[key])?.last
            let timestamp: Int64
            if let given = activity.timestamp {
                if let last, given <= last {
                    return .failure(Refusal(acceptance: .staleTimestamp(pushIndex: index, name: activity.name, timestamp: given, last: last)))
                }
                timestamp = given
            } else {
                timestamp = max(now, (last ?? 0) + 1)
            }
            stamped.timestamps.append(timestamp)
            stamped.names[key] = NameState(last: timestamp, pushID: submission.pushIDs[index], moved: true)
        }
        return .success(stamped)
    }

    // MARK: - Rows

    private static func row(_ submission: PushSubmission, _ index: Int, _ push: Push, timestamp: Int64?, acceptedAt: Date) -> RawJSON {
        let payload = APNsPayload(push, timestamp: timestamp ?? 0)
        var members: [RawJSON.Member] = [
            .init("app_id", .integer(submission.appID)),
            .init("push_id", .string(submission.pushIDs[index].lowercaseString)),
            .init("operation_id", .string(submission.operationID.lowercaseString)),
            .init("audience", push.audience.json),
            .init("payload", push.request),
            .init("apns_body", .string(payload.body)),
            .init("push_type", .string(payload.pushType.rawValue)),
            .init("priority", .integer(Int64(payload.priority))),
        ]
        switch push.content {
        case .liveActivity(let activity):
            members.append(.init("kind", .string("live_activity")))
            members.append(.init("activity_name", .string(activity.name)))
            members.append(.init("event", .string(activity.event.rawValue)))
            members.append(.init("aps_timestamp", .integer(timestamp ?? 0)))
            if let type = activity.attributesType { members.append(.init("attributes_type", .string(type))) }
            members.append(.init("alerting", .bool(activity.event != .update || activity.alert != nil)))
            if activity.event == .end, let dismissal = activity.dismissalDate { members.append(.init("dismissal_date", .integer(dismissal))) }
        case .alert:
            members.append(.init("kind", .string("alert")))
            members.append(.init("alerting", .bool(true)))
        }
        if let collapseID = payload.collapseID { members.append(.init("collapse_id", .string(collapseID))) }
        if let traceParent = submission.traceParent { members.append(.init("trace_parent", .string(traceParent))) }
        if let expiry = push.expiry {
            members.append(.init("expires_at", .number(String(Int64(expiry.date(acceptedAt: acceptedAt).timeIntervalSince1970)))))
        }
        return .object(members)
    }

    private static func insertPushes(_ rows: String, acceptedAt: Date) -> PostgresQuery {
        """
        INSERT INTO pushes (app_id, push_id, operation_id, kind, activity_name, event, aps_timestamp, audience, payload,
                            apns_body, push_type, priority, collapse_id, expires_at, attributes_type, alerting, dismissal_date,
                            accepted_at, not_before, trace_parent)
        SELECT app_id, push_id, operation_id, kind, activity_name, event, aps_timestamp, audience, payload,
               apns_body, push_type, priority, collapse_id, to_timestamp(expires_at), attributes_type, alerting,
               to_timestamp(dismissal_date), \(acceptedAt), \(acceptedAt), trace_parent
        FROM jsonb_to_recordset(\(rows)::jsonb) AS r (
            app_id bigint, push_id uuid, operation_id uuid, kind text, activity_name text, event text,
            aps_timestamp bigint, audience jsonb, payload jsonb, apns_body text, push_type text, priority smallint,
            collapse_id text, expires_at double precision, attributes_type text, alerting boolean, dismissal_date bigint,
            trace_parent text)
        """
    }

    private static func moveNames(_ names: [NameKey: NameState]) -> PostgresQuery {
        let sorted = names.sorted { ($0.key.appID, $0.key.name) < ($1.key.appID, $1.key.name) }
        return """
            INSERT INTO activity_names (app_id, name, last_timestamp, last_push_id)
            SELECT * FROM unnest(\(sorted.map(\.key.appID))::bigint[], \(sorted.map(\.key.name))::text[],
                                 \(sorted.map(\.value.last))::bigint[], \(sorted.map { $0.value.pushID! })::uuid[])
            ON CONFLICT (app_id, name) DO UPDATE SET
                last_timestamp = EXCLUDED.last_timestamp, last_push_id = EXCLUDED.last_push_id
            """
    }
}
