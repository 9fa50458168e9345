import BlimpCore
import BlimpStore
import Foundation

/// What the Push API and the schedule API check of pushes beyond their shape, against what the app has on record:
/// their content against the app's Live Activity types (``LiveActivityTypeRules``: a 400 naming the path and what was
/// expected), and a name backed by a live activity channel against ``BroadcastRules`` (a 400 that says which rule; a
/// name whose channel APNs deleted is refused with a 409 until an admin acknowledges it).
struct PushChecks: Sendable {
    let channels: LiveActivityChannelStore
    let types: LiveActivityTypeStore
    let now: @Sendable () -> Date

    /// Checks `pushes` (`paths` locates each in the body) and returns the live activity channel ids of their names that
    /// have one.
    func check(_ pushes: [Push], paths: [String], appID: Int64) async throws -> [String: String] {
        let inputs = try await self.types.inputs(for: pushes, appID: appID)
        do {
            try LiveActivityTypeRules.check(pushes, paths: paths, inputs: inputs, now: self.now())
        } catch {
            throw AirshipError.invalid(error)
        }
        let newest = try await self.channels.newest(names: BroadcastRules.names(in: pushes), appID: appID)
        do {
            return try BroadcastRules.channels(for: pushes, paths: paths, newest: newest, timestamp: Int64(self.now().timeIntervalSince1970))
        } catch {
            guard error.isChannelGone else { throw AirshipError.invalid(error.field) }
            throw AirshipError(
                .conflict, "APNs deleted the live activity channel of this Live Activity name.",
                details: .init(error: error.field.message, path: error.field.path))
        }
    }
}
