/// A JSON Schema in the subset Blimp checks Live Activity content against: what an app declares, per ActivityKit
/// `attributes_type`, for its `attributes` and its `content_state`, so that a push whose content the app could not
/// decode is refused instead of answered 200 by APNs and silently dropped on the device.
///
/// The subset: `type` (one type, or one type plus `"null"` for a Swift optional; no `type` and nothing else is any
/// value); objects with `properties`, `required` and `additionalProperties` (`true` or `false`, default `true`:
/// ActivityKit ignores extra keys); arrays with `items`, `minItems`, `maxItems`; strings with `minLength`,
/// `maxLength` (counted in Unicode scalars, as JSON Schema counts) and `enum`; integers and numbers with `minimum`,
/// `maximum` (inclusive), `enum` (compared numerically) and `format: "date"` (ActivityKit's default `Date` encoding,
/// seconds since 2001-01-01); the annotations `title`, `description`, `$schema`, `examples` and `default`. At most
/// ``maximumDepth`` levels and ``maximumNodes`` schemas in a document. Values are checked as JSON Schema says: a key
/// that is not required may be absent, and may be `null` only when its type allows null.
public struct ActivitySchema: Sendable, Equatable {
    /// What values the schema accepts, besides `null` when ``isNullable``.
    public var kind: Kind
    /// Whether `null` is accepted too (`"type": ["string", "null"]`, a Swift optional).
    public var isNullable: Bool
    /// The annotations a form labels its field with.
    public var title: String?
    public var description: String?

    public init(_ kind: Kind, isNullable: Bool = false, title: String? = nil, description: String? = nil) {
        self.kind = kind
        self.isNullable = isNullable
        self.title = title
        self.description = description
    }

    /// The kinds of value a schema describes, each with its constraints.
    public indirect enum Kind: Sendable, Equatable {
        /// Any value, `null` included (a schema with no `type`).
        case any
        /// Only `null`.
        case null
        case boolean
        case string(StringRules)
        case integer(NumberRules)
        case number(NumberRules)
        case array(ArrayRules)
        case object(ObjectRules)

        /// The JSON Schema type name (`integer`); `any value` for ``any``.
        public var typeName: String {
            switch self {
            case .any: "any value"
            case .null: "null"
            case .boolean: "boolean"
            case .string: "string"
            case .integer: "integer"
            case .number: "number"
            case .array: "array"
            case .object: "object"
            }
        }

        /// The kind in words, for messages (`an integer`).
        var name: String {
            switch self {
            case .any, .null: self.typeName
            case .integer, .array, .object: "an \(self.typeName)"
            case .boolean, .string, .number: "a \(self.typeName)"
            }
        }
    }

    /// The most levels of schemas nested in one document (the top-level schema is level 1).
    public static let maximumDepth = 16
    /// The most schemas (the top-level one, each property's and each `items`) in one document.
    public static let maximumNodes = 1000

    /// Any value.
    public static let any = ActivitySchema(.any)

    /// Whether `null` passes.
    public var acceptsNull: Bool {
        switch self.kind {
        case .any, .null: true
        default: self.isNullable
        }
    }

    /// The values allowed by `enum`, for a form's choice list; `nil` when any value of the kind is.
    public var enumValues: [RawJSON]? {
        switch self.kind {
        case .string(let rules): rules.enumValues.map { $0.map(RawJSON.string) }
        case .integer(let rules), .number(let rules): rules.enumValues.map { $0.map(\.json) }
        default: nil
        }
    }

    /// Whether the value is a date (`format: "date"` on a number or integer).
    public var isDate: Bool {
        switch self.kind {
        case .integer(let rules), .number(let rules): rules.isDate
        default: false
        }
    }
}
