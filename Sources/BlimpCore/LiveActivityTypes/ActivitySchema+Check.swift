import Foundation

extension ActivitySchema {
    /// Checks `value` against the schema and throws the first mismatch: its path inside the value, under `path`
    /// (`content_state.players[2].score`), and what was expected (`expected an integer, got a string`). Dates are
    /// checked against `now` (``ActivityDate``).
    public func check(_ value: RawJSON, at path: String, now: Date) throws(InvalidField) {
        if value == .null {
            guard self.acceptsNull else { throw self.mismatch(value, at: path) }
            return
        }
        switch (self.kind, value) {
        case (.any, _), (.boolean, .bool): return
        case (.string(let rules), .string(let string)): try rules.check(string, at: path)
        case (.integer(let rules), .number(let literal)):
            guard let number = JSONNumber(literal), number.integer != nil else {
                throw InvalidField(path, "\(self.expected), got \(literal), \(Self.notAnInteger(literal))")
            }
            try rules.check(number, at: path, now: now)
        case (.number(let rules), .number(let literal)):
            guard let number = JSONNumber(literal) else {
                throw InvalidField(path, "\(self.expected), got \(literal), too large for a Double")
            }
            try rules.check(number, at: path, now: now)
        case (.array(let rules), .array(let elements)):
            try rules.check(elements, at: path, now: now)
        case (.object(let rules), .object(let members)):
            try rules.check(members, at: path, now: now)
        default: throw self.mismatch(value, at: path)
        }
    }

    private func mismatch(_ value: RawJSON, at path: String) -> InvalidField {
        InvalidField(path, "\(self.expected), got \(value.kind)")
    }

    /// `expected an integer`, `expected a string or null`.
    var expected: String {
        "expected \(self.kind.name)\(self.isNullable ? " or null" : "")"
    }

    private static func notAnInteger(_ literal: String) -> String {
        guard let value = Double(literal), value.isFinite else { return "too large for a Double" }
        return value.rounded() == value ? "outside the 64-bit range" : "which has a fraction"
    }
}

extension ActivitySchema.StringRules {
    func check(_ string: String, at path: String) throws(InvalidField) {
        if let enumValues, !enumValues.contains(string) {
            throw InvalidField(path, "expected one of \(enumValues.map { RawJSON.string($0).text }.joined(separator: ", ")), got \(RawJSON.string(string).text)")
        }
        let length = string.unicodeScalars.count
        if let minLength, length < minLength {
            throw InvalidField(path, "expected a string of at least \(minLength) characters (Unicode scalars), got \(length)")
        }
        if let maxLength, length > maxLength {
            throw InvalidField(path, "expected a string of at most \(maxLength) characters (Unicode scalars), got \(length)")
        }
    }
}

extension ActivitySchema.NumberRules {
    func check(_ number: JSONNumber, at path: String, now: Date) throws(InvalidField) {
        if let enumValues, !enumValues.contains(where: number.isSameValue) {
            throw InvalidField(path, "expected one of \(enumValues.map(\.literal).joined(separator: ", ")), got \(number)")
        }
        if let minimum, number.isLess(than: minimum) {
            throw InvalidField(path, "expected at least \(minimum), got \(number)")
        }
        if let maximum, maximum.isLess(than: number) {
            throw InvalidField(path, "expected at most \(maximum), got \(number)")
        }
        if self.isDate, let problem = ActivityDate.problem(with: number, now: now) {
            throw InvalidField(path, problem)
        }
    }
}

extension ActivitySchema.ArrayRules {
    func check(_ elements: [RawJSON], at path: String, now: Date) throws(InvalidField) {
        if let minItems, elements.count < minItems {
            throw InvalidField(path, "expected at least \(minItems) elements, got \(elements.count)")
        }
        if let maxItems, elements.count > maxItems {
            throw InvalidField(path, "expected at most \(maxItems) elements, got \(elements.count)")
        }
        for (index, element) in elements.enumerated() {
            try self.items.check(element, at: "\(path)[\(index)]", now: now)
        }
    }
}

extension ActivitySchema.ObjectRules {
    /// The members in order (a declared key against its schema, an undeclared one refused when additional properties
    /// are not allowed), then each required key that is missing.
    func check(_ members: [RawJSON.Member], at path: String, now: Date) throws(InvalidField) {
        for member in members {
            let memberPath = JSONObjectReader.join(path, member.key)
            if let property = self.property(member.key) {
                try property.schema.check(member.value, at: memberPath, now: now)
            } else if !self.allowsAdditionalProperties {
                throw InvalidField(memberPath, "the key '\(member.key)' is not declared in the schema, which allows no other keys")
            }
        }
        for property in self.properties where property.isRequired && !members.contains(where: { $0.key == property.name }) {
            throw InvalidField(JSONObjectReader.join(path, property.name), "\(property.name) is required")
        }
    }
}
