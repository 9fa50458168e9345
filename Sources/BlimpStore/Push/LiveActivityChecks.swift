import BlimpCore
import Foundation

/// What every place that accepts pushes (the Push API and its validation, schedules, the console's compose) checks of
/// them beyond their shape, against what the app has on record, before anything is queued: their content against
/// the app's Live Activity types (``LiveActivityTypeRules``), then a name backed by a live activity channel against
/// ``BroadcastRules``. One piece of code, so the API and the console refuse the same pushes with the same words.
public struct LiveActivityChecks: Sendable {
    let channels: LiveActivityChannelStore
    let types: LiveActivityTypeStore

    public init(channels: LiveActivityChannelStore, types: LiveActivityTypeStore) {
        self.channels = channels
        self.types = types
    }

    /// Why pushes were refused: the path and message, and whether APNs deleted the name's live activity channel (a
    /// conflict with the name's state until an admin acknowledges it, not bad input).
    public struct Refusal: Error, Sendable {
        public var field: InvalidField
        public var isChannelGone: Bool
    }

    /// The live activity channel ids of the pushes' names that have one, or why the pushes are refused; `paths[i]` is
    /// where push `i` sits in the request body (`""` or `"[i]."`). `inputs`, when the caller already read them for
    /// these pushes (the console's compose, for its fields), are not read again.
    public func check(
        _ pushes: [Push], paths: [String], appID: Int64, now: Date, inputs known: LiveActivityTypeRules.Inputs? = nil
    ) async throws(StoreError) -> Result<[String: String], Refusal> {
        let inputs = if let known { known } else { try await self.types.inputs(for: pushes, appID: appID) }
        do {
            try LiveActivityTypeRules.check(pushes, paths: paths, inputs: inputs, now: now)
        } catch {
            return .failure(Refusal(field: error, isChannelGone: false))
        }
        let newest = try await self.channels.newest(names: BroadcastRules.names(in: pushes), appID: appID)
        do {
            return .success(try BroadcastRules.channels(for: pushes, paths: paths, newest: newest, timestamp: Int64(now.timeIntervalSince1970)))
        } catch {
            return .failure(Refusal(field: error.field, isChannelGone: error.isChannelGone))
        }
    }
}
