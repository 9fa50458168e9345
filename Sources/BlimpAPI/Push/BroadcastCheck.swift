import BlimpCore
import BlimpStore
import Foundation

/// Checks pushes against ``BroadcastRules`` as the Push API and the schedule API accept them: a name backed by a live
/// activity channel must follow them (a 400 that says which rule), and one whose channel APNs deleted is refused (409)
/// until an admin acknowledges it.
struct BroadcastCheck: Sendable {
    let channels: LiveActivityChannelStore
    let now: @Sendable () -> Date

    /// The live activity channel ids of the pushes' names that have one; `paths` locates each push in the body.
    func channels(for pushes: [Push], paths: [String], appID: Int64) async throws -> [String: String] {
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
