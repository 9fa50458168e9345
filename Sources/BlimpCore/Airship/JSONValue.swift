/// Any JSON value, for fields Blimp stores and returns without interpreting (channel attributes).
public enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// The value of `json`, numbers as `Double`s; `nil` when a number is too large for one.
    public init?(_ json: RawJSON) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let literal):
            guard let number = Double(literal), number.isFinite else { return nil }
            self = .number(number)
        case .string(let value): self = .string(value)
        case .array(let elements):
            var values: [JSONValue] = []
            for element in elements {
                guard let value = JSONValue(element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case .object(let members):
            var values: [String: JSONValue] = [:]
            for member in members {
                guard let value = JSONValue(member.value) else { return nil }
                values[member.key] = value
            }
            self = .object(values)
        }
    }
}
