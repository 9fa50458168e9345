/// The body of `POST /api/live_activity_channels`: `{"name": …, "message_storage_policy": 0 | 1 | "none" |
/// "most_recent"}`, read strictly (an unknown key is an error).
public struct LiveActivityChannelRequest: Sendable, Equatable {
    /// The Live Activity name the channel backs, within the limits the device API keeps (``TextLimit/activity``).
    public var name: String
    public var storagePolicy: APNsMessageStoragePolicy

    public init(json: RawJSON) throws(InvalidField) {
        let reader = try JSONObjectReader(json, at: "", allowed: ["name", "message_storage_policy"])
        self.name = try reader.required("name") { key throws(InvalidField) in
            try reader.string(key).map { text throws(InvalidField) in try TextLimit.activity.check(text, at: reader.path(of: key), key) }
        }
        self.storagePolicy = try reader.required("message_storage_policy") { key throws(InvalidField) in
            try APNsMessageStoragePolicy.parse(reader, key)
        }
    }
}
