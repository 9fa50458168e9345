import BlimpCore
import Foundation

/// A labelled form field per property of a Live Activity type's schema, so that a marketer fills a form
/// instead of writing JSON: a select for an enum, a date and time (UTC) for a date, a number field with its range, a
/// text field with its longest length, a checkbox for a boolean. Nested objects are flattened, their fields named by
/// dotted paths; what a field cannot express (an array, any value) is left to the raw JSON box. The fields' values
/// build the JSON object the push carries, which is then checked against the type as the API checks it.
struct SchemaFields: Sendable {
    /// `content_state` or `attributes`: the key the built object goes under, and the prefix of its fields' names.
    let section: String
    let schema: ActivitySchema

    /// A leaf of the schema's objects, found depth first in declared order.
    struct Property: Sendable {
        /// The keys from the section's object down to the property.
        let keys: [String]
        let schema: ActivitySchema
        let isRequired: Bool
    }

    /// The leaf properties (objects flattened); none when the schema is not an object.
    var properties: [Property] {
        guard case .object(let rules) = self.schema.kind else { return [] }
        return Self.leaves(rules, keys: [])
    }

    private static func leaves(_ rules: ActivitySchema.ObjectRules, keys: [String]) -> [Property] {
        rules.properties.flatMap { property -> [Property] in
            if case .object(let nested) = property.schema.kind { return Self.leaves(nested, keys: keys + [property.name]) }
            return [Property(keys: keys + [property.name], schema: property.schema, isRequired: property.isRequired)]
        }
    }

    /// The form field's name (and id) of the property at `keys`: `content_state.score.home`.
    func name(_ keys: [String]) -> String { ([self.section] + keys).joined(separator: ".") }

    // MARK: Building the JSON

    /// The object the fields' `values` (by field name) describe, or messages by field name about values that are not
    /// what their field takes. A field left empty leaves its key out, except that a required nullable key is `null`,
    /// a required string `""`, and an unticked boolean `false`.
    func json(_ values: [String: String]) -> Result<RawJSON, ComposeForm.Errors> {
        guard case .object(let rules) = self.schema.kind else { return .success(.object([])) }
        var errors: [String: String] = [:]
        let members = self.members(rules, keys: [], values, &errors)
        return errors.isEmpty ? .success(.object(members)) : .failure(ComposeForm.Errors(byField: errors))
    }

    private func members(
        _ rules: ActivitySchema.ObjectRules, keys: [String], _ values: [String: String], _ errors: inout [String: String]
    ) -> [RawJSON.Member] {
        var members: [RawJSON.Member] = []
        for property in rules.properties {
            let keys = keys + [property.name]
            if case .object(let nested) = property.schema.kind {
                let inner = self.members(nested, keys: keys, values, &errors)
                if !inner.isEmpty || property.isRequired { members.append(.init(property.name, .object(inner))) }
                continue
            }
            let name = self.name(keys)
            do {
                if let value = try Self.value(values[name], property.schema, isRequired: property.isRequired) {
                    members.append(.init(property.name, value))
                }
            } catch {
                errors[name] = error.message
            }
        }
        return members
    }

    /// A field's text that is not what the field takes.
    struct Unreadable: Error { let message: String }

    /// The value of a field's `text` (`nil` when left empty), or `nil` to leave the key out.
    static func value(_ text: String?, _ schema: ActivitySchema, isRequired: Bool) throws(Unreadable) -> RawJSON? {
        guard let text else {
            if case .boolean = schema.kind { return .bool(false) }
            if isRequired, schema.acceptsNull { return .null }
            if isRequired, case .string = schema.kind { return .string("") }
            return nil
        }
        switch schema.kind {
        case .boolean:
            return .bool(text == "true")
        case .string:
            return .string(text)
        case .integer(let rules), .number(let rules):
            if rules.isDate {
                guard let date = ComposeForm.date(text) else { throw Unreadable(message: "Write a date and time in UTC, like 2026-11-23T18:30.") }
                return .integer(Int64(date.timeIntervalSinceReferenceDate.rounded(.down)))
            }
            guard case .number? = try? RawJSONParser.parse(Array(text.utf8)) else { throw Unreadable(message: "Write a number, like 42 or 2.5.") }
            return .number(text)
        case .null:
            return .null
        case .any, .array, .object:
            return nil
        }
    }

    // MARK: Showing the fields

    /// A field as the compose page shows it: exactly one of its `is…` flags is set.
    struct View: Sendable {
        let name: String
        let label: String
        /// What the field takes, in words: the key's path, its kind and range, whether it may be left empty.
        let note: String
        let value: String
        let error: String?
        let isSelect, isDate, isNumber, isText, isCheckbox, isRawOnly: Bool
        let checked: Bool
        let options: [SelectOption]
        let minimum, maximum, maxLength: String?
        let step: String
    }

    /// The fields with the form's `values` and the `errors` about them, by field name.
    func views(values: [String: String], errors: [String: String]) -> [View] {
        self.properties.map { property in
            let name = self.name(property.keys)
            let value = values[name] ?? ""
            let schema = property.schema
            let path = property.keys.joined(separator: ".")
            let options = Self.options(property, selected: value)
            let numbers: ActivitySchema.NumberRules? =
                switch schema.kind {
                case .integer(let rules), .number(let rules): rules
                default: nil
                }
            let isInteger: Bool = if case .integer = schema.kind { true } else { false }
            let strings: ActivitySchema.StringRules? = if case .string(let rules) = schema.kind { rules } else { nil }
            let (kind, isRawOnly) = Self.describe(schema)
            var note = "\(path): \(kind)"
            if !property.isRequired { note += ", optional" } else if schema.acceptsNull { note += ", empty for null" }
            if let description = schema.description { note += ". \(description)" }
            let isPlain = options.isEmpty && !isRawOnly
            return View(
                name: name, label: schema.title ?? path, note: note, value: value, error: errors[name],
                isSelect: !options.isEmpty, isDate: isPlain && schema.isDate, isNumber: isPlain && numbers != nil && !schema.isDate,
                isText: isPlain && strings != nil,
                isCheckbox: schema.kind == .boolean, isRawOnly: isRawOnly, checked: value == "true", options: options,
                minimum: numbers?.minimum?.literal, maximum: numbers?.maximum?.literal, maxLength: strings?.maxLength.map(String.init),
                step: isInteger ? "1" : "any")
        }
    }

    /// An enum's choices, led by an empty one when the key may be left out or null; none for a schema with no enum.
    private static func options(_ property: Property, selected: String) -> [SelectOption] {
        guard let allowed = property.schema.enumValues else { return [] }
        let texts = allowed.compactMap { json -> String? in
            switch json {
            case .string(let text), .number(let text): text
            default: nil
            }
        }
        let empty = !property.isRequired || property.schema.acceptsNull ? [""] : []
        return (empty + texts).map { SelectOption(value: $0, label: $0.isEmpty ? "(none)" : $0, selected: $0 == selected) }
    }

    /// What a field of `schema` takes, in words, and whether only the raw JSON box can express it.
    private static func describe(_ schema: ActivitySchema) -> (String, isRawOnly: Bool) {
        if schema.enumValues != nil { return ("one of the listed values", false) }
        switch schema.kind {
        case .string(let rules):
            var words = "text"
            if let shortest = rules.minLength, shortest > 0 { words += ", at least \(shortest) characters" }
            if let longest = rules.maxLength { words += ", at most \(longest) characters" }
            return (words, false)
        case .integer(let rules): return (rules.isDate ? "date and time in UTC" : "whole number" + Self.bounds(rules), false)
        case .number(let rules): return (rules.isDate ? "date and time in UTC" : "number" + Self.bounds(rules), false)
        case .boolean: return ("ticked for true", false)
        case .null: return ("always null", true)
        case .array: return ("a list: write it in the raw JSON box", true)
        case .any, .object: return ("any JSON value: write it in the raw JSON box", true)
        }
    }

    /// ` from 0 to 99`, ` at least 0`, or nothing.
    private static func bounds(_ rules: ActivitySchema.NumberRules) -> String {
        switch (rules.minimum, rules.maximum) {
        case (let low?, let high?): " from \(low) to \(high)"
        case (let low?, nil): " at least \(low)"
        case (nil, let high?): " at most \(high)"
        case (nil, nil): ""
        }
    }

    /// One field, a partial of the compose page.
    static let template = #"""
        <div class="field{{#isText}} grow{{/isText}}">{{^isRawOnly}}<label for="{{name}}">{{label}}</label>{{/isRawOnly}}{{#isRawOnly}}<p><strong>{{label}}</strong></p>{{/isRawOnly}}
          {{#isSelect}}<select id="{{name}}" name="{{name}}">{{#options}}<option value="{{value}}" {{#selected}}selected{{/selected}}>{{label}}</option>{{/options}}</select>{{/isSelect}}
          {{#isDate}}<input id="{{name}}" name="{{name}}" type="datetime-local" value="{{value}}">{{/isDate}}
          {{#isNumber}}<input id="{{name}}" name="{{name}}" type="number" step="{{step}}"{{#minimum}} min="{{.}}"{{/minimum}}{{#maximum}} max="{{.}}"{{/maximum}} value="{{value}}">{{/isNumber}}
          {{#isText}}<input id="{{name}}" name="{{name}}" value="{{value}}"{{#maxLength}} maxlength="{{.}}"{{/maxLength}}>{{/isText}}
          {{#isCheckbox}}<label class="check"><input type="checkbox" id="{{name}}" name="{{name}}" value="true" {{#checked}}checked{{/checked}}> true</label>{{/isCheckbox}}
          <p class="muted field-note">{{note}}</p>
          {{#error}}<p id="error-{{name}}" class="field-error">{{error}}</p>{{/error}}
        </div>
        """#
}
