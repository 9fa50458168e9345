extension ActivitySchema {
    /// Where content that `old` accepts could be refused by this schema (the new one): one description per place,
    /// with its path (`score: a new required key`, `players[].name: string narrowed to max length 10`); empty when
    /// the change is safe for activities already running. Counted: a key newly required (or new and required), a type
    /// narrowed (number to integer, nullable to not, any value to one kind, one kind to another), a bound added or
    /// tightened (minimum, maximum, lengths, item counts), an enum added or values removed from it, additional keys
    /// refused where they were allowed, a key removed where additional keys are refused, a date format added.
    /// Widenings are safe, and so is a new optional key (content rarely carries keys its schema does not declare).
    public func breakingChanges(from old: ActivitySchema) -> [String] {
        var changes = BreakingChanges()
        self.compare(from: old, at: "", into: &changes)
        return changes.descriptions
    }

    private func compare(from old: ActivitySchema, at path: String, into changes: inout BreakingChanges) {
        if case .any = self.kind { return }
        switch old.kind {
        case .any:
            changes.note(path, "any value narrowed to \(self.typeName)")
            return
        case .null:
            if !self.acceptsNull { changes.note(path, "type changed from null to \(self.typeName)") }
            return
        default: break
        }
        if old.isNullable, !self.acceptsNull { changes.note(path, "no longer nullable") }
        switch (old.kind, self.kind) {
        case (.boolean, .boolean): break
        case (.string(let before), .string(let after)): after.compare(from: before, at: path, into: &changes)
        case (.integer(let before), .integer(let after)), (.number(let before), .number(let after)),
            (.integer(let before), .number(let after)):
            after.compare(from: before, kind: self.kind.typeName, at: path, into: &changes)
        case (.number(let before), .integer(let after)):
            changes.note(path, "number narrowed to integer")
            after.compare(from: before, kind: "integer", at: path, into: &changes)
        case (.array(let before), .array(let after)):
            changes.narrowed(path, "array", "min items", before.minItems, after.minItems, by: >)
            changes.narrowed(path, "array", "max items", before.maxItems, after.maxItems, by: <)
            after.items.compare(from: before.items, at: "\(path)[]", into: &changes)
        case (.object(let before), .object(let after)): after.compare(from: before, at: path, into: &changes)
        default: changes.note(path, "type changed from \(old.kind.typeName) to \(self.kind.typeName)")
        }
    }

    /// `string`, `string or null`.
    private var typeName: String { self.kind.typeName + (self.isNullable ? " or null" : "") }
}

/// The descriptions of breaking changes found so far, each prefixed with its path.
private struct BreakingChanges {
    var descriptions: [String] = []

    mutating func note(_ path: String, _ description: String) {
        self.descriptions.append(path.isEmpty ? description : "\(path): \(description)")
    }

    /// A bound that `after` adds or tightens: `isTighter(after, before)`.
    mutating func narrowed<Bound>(
        _ path: String, _ kind: String, _ name: String, _ before: Bound?, _ after: Bound?, by isTighter: (Bound, Bound) -> Bool
    ) where Bound: CustomStringConvertible {
        guard let after else { return }
        if let before, !isTighter(after, before) { return }
        self.note(path, "\(kind) narrowed to \(name) \(after)")
    }

    /// An enum that `after` adds, or values it removes.
    mutating func enumeration<Value>(
        _ path: String, _ kind: String, _ before: [Value]?, _ after: [Value]?, same: (Value, Value) -> Bool, text: (Value) -> String
    ) {
        guard let after else { return }
        guard let before else {
            self.note(path, "\(kind) narrowed to enum \(after.map(text).joined(separator: ", "))")
            return
        }
        let removed = before.filter { value in !after.contains { same(value, $0) } }
        if !removed.isEmpty { self.note(path, "enum values removed: \(removed.map(text).joined(separator: ", "))") }
    }
}

extension ActivitySchema.StringRules {
    fileprivate func compare(from old: Self, at path: String, into changes: inout BreakingChanges) {
        changes.narrowed(path, "string", "min length", old.minLength, self.minLength, by: >)
        changes.narrowed(path, "string", "max length", old.maxLength, self.maxLength, by: <)
        changes.enumeration(path, "string", old.enumValues, self.enumValues, same: ==, text: { RawJSON.string($0).text })
    }
}

extension ActivitySchema.NumberRules {
    fileprivate func compare(from old: Self, kind: String, at path: String, into changes: inout BreakingChanges) {
        changes.narrowed(path, kind, "minimum", old.minimum, self.minimum, by: { after, before in before.isLess(than: after) })
        changes.narrowed(path, kind, "maximum", old.maximum, self.maximum, by: { after, before in after.isLess(than: before) })
        changes.enumeration(path, kind, old.enumValues, self.enumValues, same: { $0.isSameValue(as: $1) }, text: \.literal)
        if self.isDate, !old.isDate { changes.note(path, "\(kind) narrowed to a date (seconds since 2001-01-01)") }
    }
}

extension ActivitySchema.ObjectRules {
    fileprivate func compare(from old: Self, at path: String, into changes: inout BreakingChanges) {
        if old.allowsAdditionalProperties, !self.allowsAdditionalProperties { changes.note(path, "additional keys now refused") }
        for before in old.properties {
            let keyPath = JSONObjectReader.join(path, before.name)
            guard let after = self.property(before.name) else {
                if !self.allowsAdditionalProperties { changes.note(keyPath, "removed, and undeclared keys are refused") }
                continue
            }
            if after.isRequired, !before.isRequired { changes.note(keyPath, "now required") }
            after.schema.compare(from: before.schema, at: keyPath, into: &changes)
        }
        for after in self.properties where after.isRequired && old.property(after.name) == nil {
            changes.note(JSONObjectReader.join(path, after.name), "a new required key")
        }
    }
}
