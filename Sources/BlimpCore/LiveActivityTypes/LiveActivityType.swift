/// What an app declared one of its Live Activity types to look like: ActivityKit's `attributes_type` name, a schema for
/// a start's `attributes` and one for every push's `content_state` (``ActivitySchema``'s subset). APNs answers 200 to
/// content the app cannot decode, and the activity silently stops updating; pushes are checked against these instead
/// (``LiveActivityTypeRules``).
public struct LiveActivityType: Sendable, Equatable {
    public var name: String
    public var attributes: ActivitySchema
    public var contentState: ActivitySchema

    public init(name: String, attributes: ActivitySchema, contentState: ActivitySchema) {
        self.name = name
        self.attributes = attributes
        self.contentState = contentState
    }

    /// The body of `PUT /api/live_activity_types/{name}`: the two schemas (`{"attributes": …, "content_state": …}`), or
    /// one example instance they are derived from (`{"example": {"attributes": …, "content_state": …}}`; the rules are
    /// ``ActivitySchema/derived(from:at:)``'s).
    public static func parse(_ body: RawJSON, name: String) throws(InvalidField) -> LiveActivityType {
        _ = try TextLimit.activity.check(name, at: "attributes_type", "attributes_type")
        let reader = try JSONObjectReader(body, at: "", allowed: ["attributes", "content_state", "example"])
        if let example = reader.raw("example") {
            guard !reader.has("attributes"), !reader.has("content_state") else {
                throw InvalidField("example", "give the schemas or an example, not both")
            }
            let instance = try JSONObjectReader(example, at: "example", allowed: ["attributes", "content_state"])
            return LiveActivityType(
                name: name,
                attributes: try ActivitySchema.derived(from: try Self.required(instance, "attributes"), at: "example.attributes"),
                contentState: try ActivitySchema.derived(from: try Self.required(instance, "content_state"), at: "example.content_state"))
        }
        return LiveActivityType(
            name: name,
            attributes: try ActivitySchema.parse(try Self.required(reader, "attributes"), at: "attributes"),
            contentState: try ActivitySchema.parse(try Self.required(reader, "content_state"), at: "content_state"))
    }

    private static func required(_ reader: JSONObjectReader, _ key: String) throws(InvalidField) -> RawJSON {
        guard let value = reader.raw(key) else { throw InvalidField(reader.path(of: key), "\(key) is required") }
        return value
    }

    /// Where content that activities started under `old` hold could be refused by this type: a change their next
    /// update would not decode under.
    public func breakingChanges(from old: LiveActivityType) -> [String] {
        self.attributes.breakingChanges(from: old.attributes).map { "attributes.\($0)" }
            + self.contentState.breakingChanges(from: old.contentState).map { "content_state.\($0)" }
    }

    /// `{"attributes_type", "attributes", "content_state"}`, the schemas as canonical documents.
    public var json: RawJSON {
        .object([
            .init("attributes_type", .string(self.name)), .init("attributes", self.attributes.json),
            .init("content_state", self.contentState.json),
        ])
    }
}
