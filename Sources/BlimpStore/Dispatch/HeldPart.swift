import Foundation
import PostgresNIO

/// A part of a push as one worker holds it: its `push_parts` row, still claimed by that worker and still sending.
/// Every write a worker makes to its part is conditioned on this (`WHERE \(held: …)`), so a worker whose lease
/// another took over changes nothing.
struct HeldPart {
    var appID: Int64
    var pushID: UUID
    var part: Int16
    var worker: String

    init(appID: Int64, pushID: UUID, part: Int16, worker: String) {
        self.appID = appID
        self.pushID = pushID
        self.part = part
        self.worker = worker
    }

    init(_ push: ClaimedPush, worker: String) {
        self.init(appID: push.appID, pushID: push.pushID, part: push.part, worker: worker)
    }
}

extension PostgresQuery.StringInterpolation {
    /// The condition that a `push_parts` row is `part`, held: its keys, its worker, and `state = 'sending'`.
    mutating func appendInterpolation(held part: HeldPart) {
        self.appendLiteral("app_id = ")
        self.appendInterpolation(part.appID)
        self.appendLiteral(" AND push_id = ")
        self.appendInterpolation(part.pushID)
        self.appendLiteral(" AND part = ")
        self.appendInterpolation(part.part)
        self.appendLiteral(" AND claimed_by = ")
        self.appendInterpolation(part.worker)
        self.appendLiteral(" AND state = 'sending'")
    }
}
