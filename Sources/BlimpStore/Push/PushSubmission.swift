import BlimpCore
import Foundation

/// One `POST /api/push` request, checked and given its ids, on its way into the queue.
public struct PushSubmission: Sendable {
    public var appID: Int64
    public var pushes: [Push]
    public var idempotencyKey: String?
    public var operationID: UUID
    public var pushIDs: [UUID]
    /// The request's trace context (``TraceParent``), stored with its pushes.
    public var traceParent: String?

    public init(appID: Int64, pushes: [Push], idempotencyKey: String?) {
        self.appID = appID
        self.pushes = pushes
        self.idempotencyKey = idempotencyKey
        self.operationID = UUID.random()
        self.pushIDs = pushes.map { _ in UUID.random() }
        self.traceParent = TraceParent.current()
    }
}

/// What became of a ``PushSubmission``.
public enum PushAcceptance: Sendable, Equatable {
    /// Committed to the queue; or, for an idempotency key seen within 24 hours, what the first request got.
    case accepted(operationID: UUID, pushIDs: [UUID])
    /// A Live Activity push named a timestamp no newer than the last accepted push of its name: devices would drop
    /// it. Nothing of the request was queued.
    case staleTimestamp(pushIndex: Int, name: String, timestamp: Int64, last: Int64)
}
