import BlimpCore
import BlimpStore
import Foundation

/// What the Push API and the schedule API check of pushes beyond their shape (``LiveActivityChecks``, shared with the
/// console), answered as Airship errors: content a Live Activity type refuses, or a push breaking ``BroadcastRules``,
/// is a 400 naming the path and what was expected; a name whose channel APNs deleted is refused with a 409 until an
/// admin acknowledges it.
struct PushChecks: Sendable {
    let checks: LiveActivityChecks
    let now: @Sendable () -> Date

    /// Checks `pushes` (`paths` locates each in the body) and returns the live activity channel ids of their names that
    /// have one.
    func check(_ pushes: [Push], paths: [String], appID: Int64) async throws -> [String: String] {
        switch try await self.checks.check(pushes, paths: paths, appID: appID, now: self.now()) {
        case .success(let channels):
            return channels
        case .failure(let refusal) where refusal.isChannelGone:
            throw AirshipError(
                .conflict, "APNs deleted the live activity channel of this Live Activity name.",
                details: .init(error: refusal.field.message, path: refusal.field.path))
        case .failure(let refusal):
            throw AirshipError.invalid(refusal.field)
        }
    }
}
