extension ActivitySchema {
    /// An object's declared properties, in the order the schema gives them.
    public struct ObjectRules: Sendable, Equatable {
        public var properties: [Property]
        /// Whether keys the schema does not declare are accepted (JSON Schema's default, and ActivityKit ignores them).
        public var allowsAdditionalProperties: Bool

        public init(properties: [Property], allowsAdditionalProperties: Bool = true) {
            self.properties = properties
            self.allowsAdditionalProperties = allowsAdditionalProperties
        }

        /// The property named `name`.
        public func property(_ name: String) -> Property? { self.properties.first { $0.name == name } }
    }

    /// One key of an object: its schema and whether the key must be present.
    public struct Property: Sendable, Equatable {
        public var name: String
        public var schema: ActivitySchema
        public var isRequired: Bool

        public init(_ name: String, _ schema: ActivitySchema, isRequired: Bool) {
            self.name = name
            self.schema = schema
            self.isRequired = isRequired
        }
    }

    /// An array's element schema and bounds on its count.
    public struct ArrayRules: Sendable, Equatable {
        public var items: ActivitySchema
        public var minItems: Int?
        public var maxItems: Int?

        public init(items: ActivitySchema, minItems: Int? = nil, maxItems: Int? = nil) {
            self.items = items
            self.minItems = minItems
            self.maxItems = maxItems
        }
    }

    /// A string's bounds on its length, in Unicode scalars (as JSON Schema counts), and its allowed values.
    public struct StringRules: Sendable, Equatable {
        public var minLength: Int?
        public var maxLength: Int?
        public var enumValues: [String]?

        public init(minLength: Int? = nil, maxLength: Int? = nil, enumValues: [String]? = nil) {
            self.minLength = minLength
            self.maxLength = maxLength
            self.enumValues = enumValues
        }
    }

    /// An integer's or number's inclusive bounds, its allowed values and whether it is a date.
    public struct NumberRules: Sendable, Equatable {
        public var minimum: JSONNumber?
        public var maximum: JSONNumber?
        public var enumValues: [JSONNumber]?
        /// `format: "date"`: seconds since 2001-01-01, ActivityKit's default `Date` encoding (``ActivityDate``).
        public var isDate: Bool

        public init(minimum: JSONNumber? = nil, maximum: JSONNumber? = nil, enumValues: [JSONNumber]? = nil, isDate: Bool = false) {
            self.minimum = minimum
            self.maximum = maximum
            self.enumValues = enumValues
            self.isDate = isDate
        }
    }
}
