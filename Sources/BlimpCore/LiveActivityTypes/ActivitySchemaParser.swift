/// Reads a schema document into an ``ActivitySchema``, refusing anything outside the subset with the path of the
/// offending keyword (`content_state.properties.score.type`), and keeping to ``ActivitySchema/maximumDepth`` and
/// ``ActivitySchema/maximumNodes`` so that no document recurses without bound.
struct ActivitySchemaParser {
    private var nodes = 0

    /// The keywords of each type besides `type` itself.
    private static let keywords: [String: Set<String>] = [
        "object": ["properties", "required", "additionalProperties"],
        "array": ["items", "minItems", "maxItems"],
        "string": ["minLength", "maxLength", "enum"],
        "integer": ["minimum", "maximum", "enum", "format"],
        "number": ["minimum", "maximum", "enum", "format"],
        "boolean": [],
        "null": [],
    ]
    private static let annotations: Set<String> = ["title", "description", "$schema", "examples", "default"]
    private static let allKeywords = Self.keywords.values.reduce(into: Set(["type"])) { $0.formUnion($1) }

    /// The top-level schema of `attributes` or `content_state`, which must be an object.
    static func document(_ json: RawJSON, at path: String) throws(InvalidField) -> ActivitySchema {
        var parser = ActivitySchemaParser()
        let schema = try parser.schema(json, at: path, depth: 1)
        guard case .object = schema.kind, !schema.isNullable else {
            throw InvalidField(
                JSONObjectReader.join(path, "type"),
                "the top-level schema must be of type \"object\" (not nullable): ActivityKit decodes attributes and content_state as a struct")
        }
        return schema
    }

    private mutating func schema(_ json: RawJSON, at path: String, depth: Int) throws(InvalidField) -> ActivitySchema {
        guard depth <= ActivitySchema.maximumDepth else {
            throw InvalidField(path, "schemas nest at most \(ActivitySchema.maximumDepth) levels deep")
        }
        self.nodes += 1
        guard self.nodes <= ActivitySchema.maximumNodes else {
            throw InvalidField(path, "a schema document has at most \(ActivitySchema.maximumNodes) schemas")
        }
        guard case .object(let members) = json else {
            if case .bool = json {
                throw InvalidField(path, "outside the subset Blimp checks: a boolean schema (use {} for any value)")
            }
            throw InvalidField(path, "expected a schema object, not \(json.kind)")
        }
        var seen = Set<String>()
        for member in members {
            let keyPath = JSONObjectReader.join(path, member.key)
            guard seen.insert(member.key).inserted else { throw InvalidField(keyPath, "the keyword appears twice") }
            guard Self.annotations.contains(member.key) || Self.allKeywords.contains(member.key) else {
                throw InvalidField(keyPath, "outside the subset Blimp checks: \(member.key)")
            }
        }
        let keywords = SchemaKeywords(members: members, path: path)
        let (type, isNullable) = try Self.type(keywords)
        for member in members where member.key != "type" && !Self.annotations.contains(member.key) {
            guard let type else {
                throw InvalidField(keywords.path(member.key), "\(member.key) needs a type to apply to")
            }
            guard Self.keywords[type]?.contains(member.key) == true else {
                throw InvalidField(keywords.path(member.key), "\(member.key) does not apply to type \"\(type)\"")
            }
        }
        let kind: ActivitySchema.Kind
        switch type {
        case nil: kind = .any
        case "null": kind = .null
        case "boolean": kind = .boolean
        case "string": kind = .string(try Self.stringRules(keywords, isNullable: isNullable))
        case "integer": kind = .integer(try Self.numberRules(keywords, isNullable: isNullable, integers: true))
        case "number": kind = .number(try Self.numberRules(keywords, isNullable: isNullable, integers: false))
        case "array": kind = .array(try self.arrayRules(keywords, depth: depth))
        default: kind = .object(try self.objectRules(keywords, depth: depth))
        }
        return ActivitySchema(
            kind, isNullable: isNullable, title: try keywords.string("title"), description: try keywords.string("description"))
    }

    /// `type`: one type name, or an array of one type and optionally `"null"`.
    private static func type(_ keywords: SchemaKeywords) throws(InvalidField) -> (name: String?, isNullable: Bool) {
        guard let value = keywords["type"] else { return (nil, false) }
        let path = keywords.path("type")
        func name(_ value: RawJSON, at path: String) throws(InvalidField) -> String {
            guard case .string(let name) = value, Self.keywords[name] != nil else {
                throw InvalidField(
                    path, "expected one of \"object\", \"array\", \"string\", \"integer\", \"number\", \"boolean\", \"null\"")
            }
            return name
        }
        switch value {
        case .array(let elements):
            let names = try elements.enumerated().map { index, element throws(InvalidField) in try name(element, at: "\(path)[\(index)]") }
            let types = names.filter { $0 != "null" }
            guard !names.isEmpty, names.count == Set(names).count, types.count <= 1 else {
                throw InvalidField(path, "outside the subset Blimp checks: a type array is one type, optionally with \"null\" (a Swift optional)")
            }
            return (types.first ?? "null", types.count == 1 && names.count == 2)
        default: return (try name(value, at: path), false)
        }
    }

    private mutating func objectRules(_ keywords: SchemaKeywords, depth: Int) throws(InvalidField) -> ActivitySchema.ObjectRules {
        var properties: [ActivitySchema.Property] = []
        if let value = keywords["properties"] {
            let path = keywords.path("properties")
            guard case .object(let members) = value else { throw InvalidField(path, "expected an object, not \(value.kind)") }
            for member in members {
                let memberPath = JSONObjectReader.join(path, member.key)
                guard !properties.contains(where: { $0.name == member.key }) else {
                    throw InvalidField(memberPath, "the property appears twice")
                }
                properties.append(.init(member.key, try self.schema(member.value, at: memberPath, depth: depth + 1), isRequired: false))
            }
        }
        if let value = keywords["required"] {
            let path = keywords.path("required")
            guard case .array(let elements) = value else { throw InvalidField(path, "expected an array of strings, not \(value.kind)") }
            for (index, element) in elements.enumerated() {
                let elementPath = "\(path)[\(index)]"
                guard case .string(let name) = element else { throw InvalidField(elementPath, "expected a string, not \(element.kind)") }
                guard let position = properties.firstIndex(where: { $0.name == name }) else {
                    throw InvalidField(elementPath, "'\(name)' is not declared in properties")
                }
                guard !properties[position].isRequired else { throw InvalidField(elementPath, "'\(name)' is listed twice") }
                properties[position].isRequired = true
            }
        }
        var allowsAdditional = true
        if let value = keywords["additionalProperties"] {
            guard case .bool(let allowed) = value else {
                throw InvalidField(keywords.path("additionalProperties"), "outside the subset Blimp checks: additionalProperties is true or false")
            }
            allowsAdditional = allowed
        }
        return .init(properties: properties, allowsAdditionalProperties: allowsAdditional)
    }

    private mutating func arrayRules(_ keywords: SchemaKeywords, depth: Int) throws(InvalidField) -> ActivitySchema.ArrayRules {
        let items = try keywords["items"].map { value throws(InvalidField) in
            try self.schema(value, at: keywords.path("items"), depth: depth + 1)
        }
        let rules = ActivitySchema.ArrayRules(
            items: items ?? .any, minItems: try keywords.count("minItems"), maxItems: try keywords.count("maxItems"))
        try Self.ordered(rules.minItems, rules.maxItems, "minItems", "maxItems", keywords)
        return rules
    }

    private static func stringRules(_ keywords: SchemaKeywords, isNullable: Bool) throws(InvalidField) -> ActivitySchema.StringRules {
        let values = try keywords.enumValues(isNullable: isNullable) { value, path throws(InvalidField) in
            guard case .string(let string) = value else { throw InvalidField(path, "expected a string, not \(value.kind)") }
            return string
        }
        let rules = ActivitySchema.StringRules(
            minLength: try keywords.count("minLength"), maxLength: try keywords.count("maxLength"), enumValues: values)
        try Self.ordered(rules.minLength, rules.maxLength, "minLength", "maxLength", keywords)
        return rules
    }

    private static func numberRules(
        _ keywords: SchemaKeywords, isNullable: Bool, integers: Bool
    ) throws(InvalidField) -> ActivitySchema.NumberRules {
        let values = try keywords.enumValues(isNullable: isNullable) { value, path throws(InvalidField) in
            let number = try SchemaKeywords.number(value, at: path)
            guard !integers || number.integer != nil else { throw InvalidField(path, "\(number) is not an integer") }
            return number
        }
        var isDate = false
        if let format = keywords["format"] {
            guard format == .string("date") else {
                throw InvalidField(keywords.path("format"), "outside the subset Blimp checks: format \(format.text) (only \"date\")")
            }
            isDate = true
        }
        let rules = ActivitySchema.NumberRules(
            minimum: try keywords.number("minimum"), maximum: try keywords.number("maximum"), enumValues: values, isDate: isDate)
        if let minimum = rules.minimum, let maximum = rules.maximum, maximum.isLess(than: minimum) {
            throw InvalidField(keywords.path("minimum"), "minimum is greater than maximum")
        }
        return rules
    }

    private static func ordered(_ low: Int?, _ high: Int?, _ lowKey: String, _ highKey: String, _ keywords: SchemaKeywords) throws(InvalidField) {
        if let low, let high, low > high { throw InvalidField(keywords.path(lowKey), "\(lowKey) is greater than \(highKey)") }
    }
}

/// The members of one schema object, read by keyword, each failure naming the keyword's path.
private struct SchemaKeywords {
    let members: [RawJSON.Member]
    let path: String

    subscript(key: String) -> RawJSON? { self.members.first { $0.key == key }?.value }

    func path(_ key: String) -> String { JSONObjectReader.join(self.path, key) }

    /// An annotation that must be a string when given.
    func string(_ key: String) throws(InvalidField) -> String? {
        guard let value = self[key] else { return nil }
        guard case .string(let string) = value else { throw InvalidField(self.path(key), "expected a string, not \(value.kind)") }
        return string
    }

    /// A non-negative integer (`minLength`, `maxItems`).
    func count(_ key: String) throws(InvalidField) -> Int? {
        guard let value = self[key] else { return nil }
        guard case .number(let literal) = value, let integer = JSONNumber(literal)?.integer, integer >= 0, let count = Int(exactly: integer) else {
            throw InvalidField(self.path(key), "expected a non-negative integer, not \(value.text)")
        }
        return count
    }

    func number(_ key: String) throws(InvalidField) -> JSONNumber? {
        try self[key].map { value throws(InvalidField) in try Self.number(value, at: self.path(key)) }
    }

    static func number(_ value: RawJSON, at path: String) throws(InvalidField) -> JSONNumber {
        guard case .number(let literal) = value else { throw InvalidField(path, "expected a number, not \(value.kind)") }
        guard let number = JSONNumber(literal) else { throw InvalidField(path, "\(literal) is too large for a Double") }
        return number
    }

    /// `enum`: a non-empty array of values read by `read`; `null` may be listed when the type is nullable, and is
    /// implied by it (the model keeps the non-null values).
    func enumValues<Value>(
        isNullable: Bool, _ read: (RawJSON, String) throws(InvalidField) -> Value
    ) throws(InvalidField) -> [Value]? {
        guard let value = self["enum"] else { return nil }
        let path = self.path("enum")
        guard case .array(let elements) = value else { throw InvalidField(path, "expected an array, not \(value.kind)") }
        var values: [Value] = []
        for (index, element) in elements.enumerated() {
            if element == .null, isNullable { continue }
            values.append(try read(element, "\(path)[\(index)]"))
        }
        guard !values.isEmpty else { throw InvalidField(path, "enum needs at least one value") }
        return values
    }
}
