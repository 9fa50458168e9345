extension ActivitySchema {
    /// The schema derived from one example instance of `attributes` or `content_state`, for an app that has a value at
    /// hand rather than a schema. The rules:
    /// - the example is an object (else "an example is an object");
    /// - each key present becomes a property, in the example's order; a key whose value is not `null` is required;
    ///   a `null` value makes an optional key of any type;
    /// - an integer literal (no fraction, no exponent: `3`, `-12`) within 64 bits gives `integer`; any other number
    ///   (`3.0`, `1e3`, `99999999999999999999`) gives `number`; a string gives `string`; `true`/`false` give `boolean`;
    /// - an array gives `items` derived from its elements when they all derive to the same schema, else items of any
    ///   type; an empty array gives items of any type;
    /// - a nested object is derived by the same rules; every object keeps allowing additional keys;
    /// - no other constraints (no lengths, ranges, enums or dates) are derived;
    /// - the same limits as a schema document: at most ``maximumDepth`` levels and ``maximumNodes`` schemas.
    public static func derived(from example: RawJSON, at path: String) throws(InvalidField) -> ActivitySchema {
        guard case .object = example else { throw InvalidField(path, "an example is an object, not \(example.kind)") }
        var deriver = ActivitySchemaDeriver()
        return try deriver.schema(example, at: path, depth: 1)
    }
}

/// Derives schemas from example values, counting the schemas it keeps against ``ActivitySchema/maximumNodes``.
private struct ActivitySchemaDeriver {
    var nodes = 0

    mutating func schema(_ value: RawJSON, at path: String, depth: Int) throws(InvalidField) -> ActivitySchema {
        guard depth <= ActivitySchema.maximumDepth else {
            throw InvalidField(path, "an example nests at most \(ActivitySchema.maximumDepth) levels deep")
        }
        self.nodes += 1
        guard self.nodes <= ActivitySchema.maximumNodes else {
            throw InvalidField(path, "an example derives at most \(ActivitySchema.maximumNodes) schemas")
        }
        switch value {
        case .null: return .any
        case .bool: return ActivitySchema(.boolean)
        case .string: return ActivitySchema(.string(.init()))
        case .number(let literal):
            return ActivitySchema(Int64(literal) == nil ? .number(.init()) : .integer(.init()))
        case .array(let elements): return ActivitySchema(.array(.init(items: try self.items(elements, at: path, depth: depth))))
        case .object(let members):
            var properties: [ActivitySchema.Property] = []
            for member in members where !properties.contains(where: { $0.name == member.key }) {
                let schema = try self.schema(member.value, at: JSONObjectReader.join(path, member.key), depth: depth + 1)
                properties.append(.init(member.key, schema, isRequired: member.value != .null))
            }
            return ActivitySchema(.object(.init(properties: properties)))
        }
    }

    /// The elements' common schema, or any value when they differ or there are none.
    private mutating func items(_ elements: [RawJSON], at path: String, depth: Int) throws(InvalidField) -> ActivitySchema {
        var common: (schema: ActivitySchema, nodes: Int)?
        for (index, element) in elements.enumerated() {
            var deriver = ActivitySchemaDeriver(nodes: self.nodes)
            let schema = try deriver.schema(element, at: "\(path)[\(index)]", depth: depth + 1)
            if let common, common.schema != schema {
                self.nodes += 1
                return .any
            }
            common = (schema, deriver.nodes)
        }
        self.nodes = common?.nodes ?? self.nodes + 1
        return common?.schema ?? .any
    }
}
