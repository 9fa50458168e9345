/// The body of the SDK's `PUT /api/channels/sdk/batch/{id}?platform=ios`: tag changes, attribute changes and Live
/// Activity tokens for one channel (reference: airship-ios-sdk.md §4.6). Subscription lists are accepted and ignored.
public struct ChannelBatch: Sendable {
    public var tags: TagOperations?
    public var attributes: [AttributeChange]?
    public var liveActivities: [LiveActivityUpdateEntry]?

    /// The most entries of each kind one batch may carry.
    public static let maximumEntries = 1000

    /// `{"action": "set", "key": "k", "value": …}` or `{"action": "remove", "key": "k"}`.
    public struct AttributeChange: Sendable {
        public var action: String
        public var key: String
        public var value: JSONValue?
    }

    /// Reads the body. Absent and `null` fields are `nil`; keys Blimp has no use for are ignored.
    public init(json: RawJSON) throws(InvalidField) {
        let batch = try JSONObjectReader(json, at: "", allowed: nil)
        self.tags = try batch.raw("tags").map { tags throws(InvalidField) in try TagOperations(json: tags, at: "tags") }
        self.attributes = try batch.array("attributes")?.map { element throws(InvalidField) in
            let change = try JSONObjectReader(element.value, at: element.path, allowed: nil)
            return AttributeChange(
                action: try change.required("action") { key throws(InvalidField) in try change.string(key, allowsEmpty: true) },
                key: try change.required("key") { key throws(InvalidField) in try change.string(key, allowsEmpty: true) },
                value: try change.raw("value").map { value throws(InvalidField) in
                    guard let value = JSONValue(value) else { throw InvalidField(change.path(of: "value"), "a number is out of range") }
                    return value
                }
            )
        }
        self.liveActivities = try batch.array("live_activities")?.map { element throws(InvalidField) in
            try LiveActivityUpdateEntry(json: element.value, at: element.path)
        }
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
