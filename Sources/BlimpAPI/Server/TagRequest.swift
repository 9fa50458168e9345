import BlimpCore

/// The body of a tag request: an audience of channels or named users, and `add` / `remove` / `set` beside it, which
/// must follow Airship's limits (a broken one is an ``InvalidField``, answered 400).
struct TagRequest<Audience> {
    var audience: Audience
    var operations: TagOperations

    /// Reads the body; `audience` reads its `audience` object.
    init(json: RawJSON, audience: (JSONObjectReader) throws(InvalidField) -> Audience) throws(InvalidField) {
        let body = try JSONObjectReader(json, at: "", allowed: nil)
        guard let audienceObject = try body.reader("audience", allowed: nil) else {
            throw InvalidField("audience", "audience is required")
        }
        self.audience = try audience(audienceObject)
        self.operations = try TagOperations(json: json, at: "")
        try self.operations.validate(exclusiveSet: true)
    }
}
