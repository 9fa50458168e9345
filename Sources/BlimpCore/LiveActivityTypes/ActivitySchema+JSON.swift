extension ActivitySchema {
    /// Reads a schema document: the top-level schema of `attributes` or `content_state`, which must be an object.
    /// Anything outside the subset is refused with the path of the offending keyword, under `path`
    /// (`content_state` → `content_state.properties.score.type`).
    public static func parse(_ json: RawJSON, at path: String) throws(InvalidField) -> ActivitySchema {
        try ActivitySchemaParser.document(json, at: path)
    }

    /// The schema as a canonical JSON Schema document, what is stored and what GET returns: annotations first, then
    /// `type`, then the type's keywords in a fixed order; `required` in property order; `null` listed in a nullable
    /// type's `enum`, so that any JSON Schema validator reads it as Blimp does. `parse(json)` gives this schema back.
    public var json: RawJSON {
        var members: [RawJSON.Member] = []
        if let title { members.append(.init("title", .string(title))) }
        if let description { members.append(.init("description", .string(description))) }
        func type(_ name: String) {
            members.append(.init("type", self.isNullable ? .array([.string(name), .string("null")]) : .string(name)))
        }
        func optional(_ key: String, _ value: RawJSON?) {
            if let value { members.append(.init(key, value)) }
        }
        func enumeration(_ values: [RawJSON]?) {
            optional("enum", values.map { .array(self.isNullable ? $0 + [.null] : $0) })
        }
        switch self.kind {
        case .any: break
        case .null: type("null")
        case .boolean: type("boolean")
        case .string(let rules):
            type("string")
            optional("minLength", rules.minLength.map { .integer(Int64($0)) })
            optional("maxLength", rules.maxLength.map { .integer(Int64($0)) })
            enumeration(self.enumValues)
        case .integer(let rules), .number(let rules):
            if case .integer = self.kind { type("integer") } else { type("number") }
            if rules.isDate { members.append(.init("format", .string("date"))) }
            optional("minimum", rules.minimum?.json)
            optional("maximum", rules.maximum?.json)
            enumeration(self.enumValues)
        case .array(let rules):
            type("array")
            members.append(.init("items", rules.items.json))
            optional("minItems", rules.minItems.map { .integer(Int64($0)) })
            optional("maxItems", rules.maxItems.map { .integer(Int64($0)) })
        case .object(let rules):
            type("object")
            members.append(.init("properties", .object(rules.properties.map { .init($0.name, $0.schema.json) })))
            let required = rules.properties.filter(\.isRequired).map { RawJSON.string($0.name) }
            if !required.isEmpty { members.append(.init("required", .array(required))) }
            members.append(.init("additionalProperties", .bool(rules.allowsAdditionalProperties)))
        }
        return .object(members)
    }
}
