import BlimpCore
import Logging
import PostgresNIO

/// What ``PushPreparation`` needs from the app's records for pushes, read for every path that accepts them (the Push API
/// and its validation, schedules, the console's compose): the Live Activity types they are checked against and each of
/// their names' newest live activity channel. The reading is here; the decision is ``PushPreparation``'s, with no I/O.
///
/// Concurrent reads are gathered (``Coalescer``): the requests waiting while a read runs are read together next, with
/// one statement of each kind per app for all their names, instead of each request planning and running its own. A
/// request alone is read at once. Every read starts after its request arrived, so none sees older records than a read
/// of its own would.
public struct PushPreparationInputs: Sendable {
    let channels: LiveActivityChannelStore
    let types: LiveActivityTypeStore
    private let reads: Coalescer<Lookup, PushPreparation.Inputs>

    public init(channels: LiveActivityChannelStore, types: LiveActivityTypeStore) {
        self.channels = channels
        self.types = types
        self.reads = Coalescer { lookups in try await Self.read(lookups, channels: channels, types: types) }
    }

    /// Inputs read through stores of their own over `client` (a worker firing schedules).
    public init(client: Database, logger: Logger) {
        self.init(channels: LiveActivityChannelStore(client: client, logger: logger), types: LiveActivityTypeStore(client: client, logger: logger))
    }

    /// The inputs for `pushes` of the app. `types`, when the caller already read them for these pushes (the console's
    /// compose, for its fields), are not read again.
    public func read(for pushes: [Push], appID: Int64, types known: LiveActivityTypeRules.Inputs? = nil) async throws(StoreError) -> PushPreparation.Inputs {
        let (names, named) = LiveActivityTypeRules.lookups(in: pushes)
        if let known {
            return PushPreparation.Inputs(types: known, newestChannels: try await self.channels.newest(names: names, appID: appID))
        }
        guard !names.isEmpty else { return PushPreparation.Inputs() }
        return try await StoreError.mapping(Lookup(appID: appID, names: names, types: named), to: self.reads)
    }

    /// What one request asks: its app, its pushes' names and the types they name.
    struct Lookup: Sendable {
        var appID: Int64
        var names: [String]
        var types: [String]
    }

    /// The inputs of each lookup, in order. Lookups of one app share one read of all their names and types: a lookup
    /// gets more than it asked for, keyed by names and types it does not ask about.
    private static func read(
        _ lookups: [Lookup], channels: LiveActivityChannelStore, types: LiveActivityTypeStore
    ) async throws(StoreError) -> [PushPreparation.Inputs] {
        var inputs: [Int64: PushPreparation.Inputs] = [:]
        for (appID, app) in Dictionary(grouping: lookups, by: \.appID) {
            let names = Set(app.flatMap(\.names)).sorted()
            inputs[appID] = PushPreparation.Inputs(
                types: try await types.inputs(names: names, types: Set(app.flatMap(\.types)).sorted(), appID: appID),
                newestChannels: try await channels.newest(names: names, appID: appID))
        }
        return lookups.map { inputs[$0.appID] ?? PushPreparation.Inputs() }
    }
}
