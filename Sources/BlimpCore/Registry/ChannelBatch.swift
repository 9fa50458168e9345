/// The body of the SDK's `PUT /api/channels/sdk/batch/{id}?platform=ios`: tag changes, attribute changes and Live
/// Activity tokens for one channel (urbanairship/ios-library, `Airship/AirshipCore/Source/ChannelBulkUpdateAPIClient.swift`). Subscription lists are accepted and ignored.
///
/// The SDK treats a 4xx on this route as final and drops the batch, so one bad entry (a phone with a wrong clock, a
/// name too long) must not cost the device its other entries: each `attributes` and `live_activities` entry, and the
/// `tags` as a whole, is read and checked on its own, and one that breaks a rule is skipped and reported in
/// ``CheckedChannelBatch/skipped``. Only a body that is not a batch at all, or is over the limits, is refused whole.
public struct ChannelBatch: Sendable {
    /// The tag changes, or why they are skipped.
    public var tags: Result<TagOperations, InvalidField>?
    public var attributes: [Result<AttributeChange, InvalidField>]
    public var liveActivities: [Result<LiveActivityUpdateEntry, InvalidField>]

    /// The most `live_activities` entries one batch may carry.
    public static let maximumEntries = 1000
    /// The most attribute changes one batch may carry.
    public static let maximumAttributeChanges = 100
    /// The largest attribute value, as JSON text.
    public static let maximumAttributeBytes = 1024

    /// `{"action": "set", "key": "k", "value": …}` or `{"action": "remove", "key": "k"}`.
    public struct AttributeChange: Sendable {
        public var action: String
        public var key: String
        public var value: JSONValue?

        init(json: RawJSON, at path: String) throws(InvalidField) {
            let change = try JSONObjectReader(json, at: path, allowed: nil)
            self.action = try change.required("action") { key throws(InvalidField) in try change.string(key, allowsEmpty: true) }
            self.key = try change.required("key") { key throws(InvalidField) in try change.string(key, allowsEmpty: true) }
            self.value = try change.raw("value").map { value throws(InvalidField) in
                guard value.text.utf8.count <= ChannelBatch.maximumAttributeBytes else {
                    throw InvalidField(change.path(of: "value"), "an attribute value is at most \(ChannelBatch.maximumAttributeBytes) bytes of JSON")
                }
                guard let value = JSONValue(value) else { throw InvalidField(change.path(of: "value"), "a number is out of range") }
                return value
            }
        }
    }

    /// Reads the body. Absent and `null` fields are `nil`; keys Blimp has no use for are ignored.
    public init(json: RawJSON) throws(InvalidField) {
        let batch = try JSONObjectReader(json, at: "", allowed: nil)
        self.tags = batch.raw("tags").map { tags in Result { () throws(InvalidField) in try TagOperations(json: tags, at: "tags") } }
        self.attributes = try batch.array("attributes")?.map { element in
            Result { () throws(InvalidField) in try AttributeChange(json: element.value, at: element.path) }
        } ?? []
        self.liveActivities = try batch.array("live_activities")?.map { element in
            Result { () throws(InvalidField) in try LiveActivityUpdateEntry(json: element.value, at: element.path) }
        } ?? []
    }

    /// The batch's changes in order, with the entries skipped and why; throws only when the batch is over its limits.
    public func checked() throws(InvalidField) -> CheckedChannelBatch {
        guard self.attributes.count <= Self.maximumAttributeChanges else {
            throw InvalidField("attributes", "at most \(Self.maximumAttributeChanges) attribute changes per batch")
        }
        guard self.liveActivities.count <= Self.maximumEntries else {
            throw InvalidField("live_activities", "at most \(Self.maximumEntries) entries per batch")
        }
        var skipped: [InvalidField] = []
        var tags = TagOperations()
        if let read = self.tags {
            do throws(InvalidField) {
                let operations = try read.get()
                try Self.within("tags") { () throws(InvalidField) in try operations.validate(exclusiveSet: false) }
                tags = operations
            } catch {
                skipped.append(error)
            }
        }
        var attributes: [(key: String, value: JSONValue?)] = []
        for (index, read) in self.attributes.enumerated() {
            do throws(InvalidField) {
                attributes.append(try Self.check(try read.get(), at: "attributes[\(index)]"))
            } catch {
                skipped.append(error)
            }
        }
        var updates: [LiveActivityUpdate] = []
        for (index, read) in self.liveActivities.enumerated() {
            do throws(InvalidField) {
                let entry = try read.get()
                updates.append(try Self.within("live_activities[\(index)]") { () throws(InvalidField) in try entry.checked() })
            } catch {
                skipped.append(error)
            }
        }
        return CheckedChannelBatch(tags: tags, attributes: attributes, liveActivities: updates, skipped: skipped)
    }

    /// What `body` returns, or its error with `prefix` before the error's path.
    private static func within<T>(_ prefix: String, _ body: () throws(InvalidField) -> T) throws(InvalidField) -> T {
        do {
            return try body()
        } catch {
            throw error.within(prefix)
        }
    }

    private static func check(_ change: AttributeChange, at path: String) throws(InvalidField) -> (key: String, value: JSONValue?) {
        try TextLimit.name.check(change.key, at: "\(path).key", "an attribute key")
        switch change.action {
        case "set":
            guard let value = change.value else { throw InvalidField("\(path).value", "set needs a value") }
            return (change.key, value)
        case "remove":
            return (change.key, nil)
        default:
            throw InvalidField("\(path).action", "action is set or remove")
        }
    }
}

/// A ``ChannelBatch`` that passed its checks.
public struct CheckedChannelBatch: Sendable {
    public let tags: TagOperations
    /// Attribute changes in order; a `nil` value removes the key.
    public let attributes: [(key: String, value: JSONValue?)]
    public let liveActivities: [LiveActivityUpdate]
    /// The entries left out, each with the rule it broke (paths from the body's root).
    public let skipped: [InvalidField]

    /// The most attributes one channel keeps: a change that would add a key beyond them is left out.
    public static let maximumAttributesPerChannel = 100

    public init(
        tags: TagOperations, attributes: [(key: String, value: JSONValue?)], liveActivities: [LiveActivityUpdate],
        skipped: [InvalidField] = []
    ) {
        self.tags = tags
        self.attributes = attributes
        self.liveActivities = liveActivities
        self.skipped = skipped
    }
}
