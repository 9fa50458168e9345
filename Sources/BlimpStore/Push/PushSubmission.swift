import BlimpCore
import Foundation

/// One request's pushes, prepared (``PushPreparation``) and given their ids, on their way into the queue: from the Push
/// API, the console's compose, or a schedule as it fires.
public struct PushSubmission: Sendable {
    /// One push of the request with the id it is queued under: a ``UUIDv7``, so the id tells when it was accepted.
    public struct Item: Sendable {
        public var pushID: UUID
        public var push: Push
        /// The `apns-channel-id` of the live activity channel backing the push's name: a start subscribes its
        /// activities to it, an update or end is published to it once.
        public var broadcastChannelID: String?
        /// What a worker sends, as prepared; the intake sets a Live Activity's timestamp in it.
        public var payload: APNsPayload
    }

    public var appID: Int64
    public var items: [Item]
    public var idempotencyKey: String?
    public var operationID: UUID
    /// The request's trace context (``TraceParent``), stored with its pushes.
    public var traceParent: String?
    /// The ends that the request's starts schedule (`end_after`, `end_at`), stored with its pushes.
    public var endings: [(scheduleID: UUID, schedule: ScheduledPush)]
    /// For a push a local-time schedule fires in one time zone: that zone, and whether it is the app's default (then
    /// the push also goes to channels without a valid zone).
    public var localTimeZone: LocalTimeZone?
    /// Who sent the request and from where: the intake records a `push.accepted` entry per push in the transaction
    /// that queues them. `nil` only for a schedule's firing (the schedule's creation is on record).
    public var origin: AuditOrigin?

    public init(appID: Int64, prepared: [PreparedPush], idempotencyKey: String?, origin: AuditOrigin? = nil) {
        self.appID = appID
        self.origin = origin
        self.items = prepared.map {
            Item(pushID: UUIDv7.make(), push: $0.push, broadcastChannelID: $0.broadcastChannelID, payload: $0.payload)
        }
        self.endings = prepared.compactMap { push in push.ending.map { (UUID.random(), $0) } }
        self.idempotencyKey = idempotencyKey
        self.operationID = UUID.random()
        self.traceParent = TraceParent.current()
    }

    /// The pushes' ids, in request order.
    public var pushIDs: [UUID] { self.items.map(\.pushID) }

    /// The `push.accepted` entries of the request's pushes (none without an origin): each names its push, its
    /// operation, kind, and Live Activity name and event.
    var auditEntries: [AuditEntry] {
        guard let origin = self.origin else { return [] }
        return self.items.map { item in
            var details: [RawJSON.Member] = [
                .init("operation_id", .string(self.operationID.lowercaseString)), .init("kind", .string(item.push.kind.rawValue)),
            ]
            if case .liveActivity(let activity) = item.push.content {
                details += [.init("name", .string(activity.name)), .init("event", .string(activity.event.rawValue))]
            }
            return origin.entry(appID: self.appID, .pushAccepted, subject: item.pushID.lowercaseString, details: .object(details))
        }
    }
}

/// The time zone a push fired by a local-time schedule is for.
public struct LocalTimeZone: Sendable, Equatable {
    public var name: String
    public var isDefault: Bool

    public init(name: String, isDefault: Bool) {
        self.name = name
        self.isDefault = isDefault
    }
}

/// What became of a ``PushSubmission``: the intake refuses none (what a push may be is checked before, by
/// ``PushPreparation``).
public enum PushAcceptance: Sendable, Equatable {
    /// Committed to the queue; or, for an idempotency key seen within 24 hours, what the first request got.
    case accepted(operationID: UUID, pushIDs: [UUID])
}
