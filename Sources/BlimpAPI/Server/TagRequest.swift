import BlimpCore

/// The body of a tag request: an audience of channels or named users, and `add` / `remove` / `set` beside it, which
/// must follow Airship's limits (a broken one is an ``InvalidField``, answered 400).
struct TagRequest<Audience: Decodable>: Decodable {
    var audience: Audience
    var operations: TagOperations

    enum CodingKeys: String, CodingKey {
        case audience
    }

    init(from decoder: any Decoder) throws {
        self.audience = try decoder.container(keyedBy: CodingKeys.self).decode(Audience.self, forKey: .audience)
        self.operations = try TagOperations(from: decoder)
        try self.operations.validate(exclusiveSet: true)
    }
}
