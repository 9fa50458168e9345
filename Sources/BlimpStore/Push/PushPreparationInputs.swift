import BlimpCore
import Logging
import PostgresNIO

/// What ``PushPreparation`` needs from the app's records for pushes, read for every path that accepts them (the Push API
/// and its validation, schedules, the console's compose): the Live Activity types they are checked against and each of
/// their names' newest live activity channel. The reading is here; the decision is ``PushPreparation``'s, with no I/O.
public struct PushPreparationInputs: Sendable {
    let channels: LiveActivityChannelStore
    let types: LiveActivityTypeStore

    public init(channels: LiveActivityChannelStore, types: LiveActivityTypeStore) {
        self.channels = channels
        self.types = types
    }

    /// Inputs read through stores of their own over `client` (a worker firing schedules).
    public init(client: PostgresClient, logger: Logger) {
        self.init(channels: LiveActivityChannelStore(client: client, logger: logger), types: LiveActivityTypeStore(client: client, logger: logger))
    }

    /// The inputs for `pushes` of the app. `types`, when the caller already read them for these pushes (the console's
    /// compose, for its fields), are not read again.
    public func read(for pushes: [Push], appID: Int64, types known: LiveActivityTypeRules.Inputs? = nil) async throws(StoreError) -> PushPreparation.Inputs {
        let types = if let known { known } else { try await self.types.inputs(for: pushes, appID: appID) }
        return PushPreparation.Inputs(types: types, newestChannels: try await self.channels.newest(names: BroadcastRules.names(in: pushes), appID: appID))
    }
}
