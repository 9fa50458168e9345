import BlimpCore
import BlimpStore
import Foundation

extension PushSubmission {
    /// `pushes` prepared as the Push API prepares them (``PushPreparation``) for an app with no Live Activity types or
    /// live activity channels on record: what the tests of the intake and the workers queue.
    public init(appID: Int64, pushes: [Push], idempotencyKey: String?, origin: AuditOrigin? = nil, now: Date = Date()) throws {
        let prepared = try PushPreparation.prepare(pushes, paths: pushes.map { _ in "" }, inputs: .init(), now: now)
        self.init(appID: appID, prepared: prepared, idempotencyKey: idempotencyKey, origin: origin)
    }
}
