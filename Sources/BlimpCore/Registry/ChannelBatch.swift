/// The body of the SDK's `PUT /api/channels/sdk/batch/{id}?platform=ios`: tag changes, attribute changes and Live
/// Activity tokens for one channel (reference: airship-ios-sdk.md §4.6). Subscription lists are accepted and ignored.
public struct ChannelBatch: Decodable, Sendable {
    public var tags: TagOperations?
    public var attributes: [AttributeChange]?
    public var liveActivities: [LiveActivityUpdateEntry]?

    /// The most entries of each kind one batch may carry.
    public static let maximumEntries = 1000

    enum CodingKeys: String, CodingKey {
        case tags, attributes
        case liveActivities = "live_activities"
    }

    /// `{"action": "set", "key": "k", "value": …}` or `{"action": "remove", "key": "k"}`.
    public struct AttributeChange: Decodable, Sendable {
        public var action: String
        public var key: String
        public var value: JSONValue?
    }

    /// The batch's changes in order, or the first field that breaks a rule.
    public func checked() throws(InvalidField) -> CheckedChannelBatch {
        let tags = self.tags ?? TagOperations()
        do {
            try tags.validate(exclusiveSet: false)
        } catch {
            throw error.within("tags")
        }
        let attributes = self.attributes ?? []
        let entries = self.liveActivities ?? []
        guard attributes.count <= Self.maximumEntries else {
            throw InvalidField("attributes", "at most \(Self.maximumEntries) attribute changes per batch")
        }
        guard entries.count <= Self.maximumEntries else {
            throw InvalidField("live_activities", "at most \(Self.maximumEntries) entries per batch")
        }
        var checkedAttributes: [(key: String, value: JSONValue?)] = []
        for (index, change) in attributes.enumerated() {
            guard (1...128).contains(change.key.count) else {
                throw InvalidField("attributes[\(index)].key", "an attribute key is 1 to 128 characters")
            }
            switch change.action {
            case "set":
                guard let value = change.value else {
                    throw InvalidField("attributes[\(index)].value", "set needs a value")
                }
                checkedAttributes.append((change.key, value))
            case "remove":
                checkedAttributes.append((change.key, nil))
            default:
                throw InvalidField("attributes[\(index)].action", "action is set or remove")
            }
        }
        var updates: [LiveActivityUpdate] = []
        for (index, entry) in entries.enumerated() {
            do {
                updates.append(try entry.checked())
            } catch {
                throw error.within("live_activities[\(index)]")
            }
        }
        return CheckedChannelBatch(tags: tags, attributes: checkedAttributes, liveActivities: updates)
    }
}

/// A ``ChannelBatch`` that passed its checks.
public struct CheckedChannelBatch: Sendable {
    public let tags: TagOperations
    /// Attribute changes in order; a `nil` value removes the key.
    public let attributes: [(key: String, value: JSONValue?)]
    public let liveActivities: [LiveActivityUpdate]

    public init(tags: TagOperations, attributes: [(key: String, value: JSONValue?)], liveActivities: [LiveActivityUpdate]) {
        self.tags = tags
        self.attributes = attributes
        self.liveActivities = liveActivities
    }
}
