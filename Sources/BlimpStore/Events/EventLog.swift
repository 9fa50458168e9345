import BlimpCore
import Foundation
import Logging
import PostgresNIO

/// The app's event log (`events`), read as a stream. Events are written by the transactions that make the changes they
/// report (the intake's `PUSH_BODY`, the outcomes' `SEND` and `SEND_REJECTED`); this reads them in offset order, only
/// below the oldest transaction still running, so that a reader never passes an event that has yet to commit
/// (``EventOffset``).
public struct EventLog: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The offset a stream starting at `start` reads after. The latest is the oldest transaction still running: an
    /// event it or a later one commits is new to the stream.
    public func offset(for start: EventStreamRequest.Start) async throws(StoreError) -> EventOffset {
        switch start {
        case .earliest: return .start
        case .after(let offset): return offset
        case .latest:
            let horizon = try await StoreError.mapping {
                try await self.client.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", logger: self.logger)
                    .decode(String.self).array().first
            }
            return EventOffset(transaction: horizon.flatMap { UInt64($0) } ?? 0, id: 0)
        }
    }

    /// Up to `limit` of the app's events after `offset`, in order, each with its body as the stream sends it.
    public func events(appID: Int64, after offset: EventOffset, limit: Int) async throws(StoreError) -> [StreamedEvent] {
        try await StoreError.mapping {
            let rows = try await self.client.query(
                """
                SELECT e.xid::text, e.id, md5(e.xid::text || ':' || e.id)::uuid, e.type, e.occurred_at, e.processed_at,
                       e.channel_id, c.named_user_id, e.push_id, e.body::text, p.payload::text, p.alerting
                FROM events e
                LEFT JOIN channels c ON c.app_id = e.app_id AND c.channel_id = e.channel_id
                LEFT JOIN pushes p ON p.app_id = e.app_id AND p.push_id = e.push_id
                WHERE e.app_id = \(appID) AND (e.xid, e.id) > (\(String(offset.transaction))::xid8, \(offset.id))
                  AND e.xid < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY e.xid, e.id
                LIMIT \(limit)
                """,
                logger: self.logger
            )
            var events: [StreamedEvent] = []
            for try await row in rows.decode(
                (String, Int64, UUID, String, Date, Date, UUID?, String?, UUID?, String?, String?, Bool?).self
            ) {
                let (transaction, id, eventID, typeName, occurredAt, processedAt, channelID, namedUserID, pushID, body, payload, alerting) = row
                // A type a later release writes is left to that release's readers.
                guard let type = EventType(rawValue: typeName), let transaction = UInt64(transaction) else { continue }
                events.append(StreamedEvent(
                    offset: EventOffset(transaction: transaction, id: id), id: eventID, type: type, occurredAt: occurredAt,
                    processedAt: processedAt, channelID: channelID, namedUserID: namedUserID, pushID: pushID,
                    body: Self.body(of: type, pushID: pushID, stored: body, payload: payload, alerting: alerting)))
            }
            return events
        }
    }

    /// An event's `body`: the push id, and what the type tells of it.
    /// - `PUSH_BODY`: the push object as accepted, base64-encoded (`payload`), never trimmed, its `resource` `PUSH`;
    ///   without `payload` once the push's report has aged out.
    /// - `SEND`: whether the push lit the screen (`alerting`).
    /// - `SEND_REJECTED`: APNs's HTTP status (0: no answer) and reason.
    static func body(of type: EventType, pushID: UUID?, stored: String?, payload: String?, alerting: Bool?) -> RawJSON {
        var members: [RawJSON.Member] = pushID.map { [.init("push_id", .string($0.lowercaseString))] } ?? []
        switch type {
        case .pushBody:
            members.append(.init("resource", .string("PUSH")))
            members.append(.init("trimmed", .bool(false)))
            if let payload { members.append(.init("payload", .string(Data(payload.utf8).base64EncodedString()))) }
        case .send:
            members.append(.init("alerting", .bool(alerting ?? false)))
        case .sendRejected:
            if let stored, case .object(let details)? = try? RawJSONParser.parse(Array(stored.utf8)) { members += details }
        }
        return .object(members)
    }
}
