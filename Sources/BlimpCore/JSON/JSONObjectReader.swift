/// Typed reads from one JSON object of a request, each failure an ``InvalidField`` naming the member's full path
/// (`notification.ios.live_activity.priority`). With `allowed`, building it rejects other members, so a misspelt key
/// is a 400 rather than silently ignored; without, other members are ignored (the SDK sends fields Blimp has no use
/// for).
public struct JSONObjectReader {
    /// Where the object is in the body (`notification.ios`); empty for the body itself.
    public let path: String
    private let members: [RawJSON.Member]

    /// A reader of `value`, which must be an object, found at `path`; with `allowed`, no other keys may appear.
    public init(_ value: RawJSON, at path: String, allowed: Set<String>?) throws(InvalidField) {
        guard case .object(let members) = value else { throw InvalidField(path, "expected an object, not \(value.kind)") }
        if let allowed {
            for member in members where !allowed.contains(member.key) {
                throw InvalidField(Self.join(path, member.key), "the key '\(member.key)' is not allowed in this context")
            }
        }
        self.path = path
        self.members = members
    }

    var isEmpty: Bool { self.members.isEmpty }
    var keys: [String] { self.members.map(\.key) }

    /// Whether the member is there and not `null` (which counts as absent, as in ``raw(_:)``).
    public func has(_ key: String) -> Bool { self.raw(key) != nil }

    /// The member's value as sent, `nil` when absent (a JSON `null` counts as absent).
    func raw(_ key: String) -> RawJSON? {
        guard let value = self.members.first(where: { $0.key == key })?.value, value != .null else { return nil }
        return value
    }

    func path(of key: String) -> String { Self.join(self.path, key) }

    /// What `read` finds under `key`; absent (or `null`) is "`key` is required".
    public func required<T>(_ key: String, _ read: (String) throws(InvalidField) -> T?) throws(InvalidField) -> T {
        guard let value = try read(key) else { throw InvalidField(self.path(of: key), "\(key) is required") }
        return value
    }

    func string(
        _ key: String,
        maximumLength: Int = 1024,
        allowsEmpty: Bool = false
    ) throws(InvalidField) -> String? {
        guard let value = self.raw(key) else { return nil }
        guard case .string(let string) = value else { throw self.wrongKind(key, "a string", value) }
        guard allowsEmpty || !string.isEmpty else { throw InvalidField(self.path(of: key), "must not be empty") }
        guard string.utf8.count <= maximumLength else {
            throw InvalidField(self.path(of: key), "must be at most \(maximumLength) bytes")
        }
        return string
    }

    func bool(_ key: String) throws(InvalidField) -> Bool? {
        guard let value = self.raw(key) else { return nil }
        guard case .bool(let bool) = value else { throw self.wrongKind(key, "a boolean", value) }
        return bool
    }

    /// A whole number in `range`; `1.0` is not one.
    func integer(_ key: String, in range: ClosedRange<Int64>) throws(InvalidField) -> Int64? {
        guard let value = self.raw(key) else { return nil }
        guard case .number(let literal) = value, let integer = Int64(literal) else {
            throw self.wrongKind(key, "a whole number", value)
        }
        guard range.contains(integer) else {
            throw InvalidField(self.path(of: key), "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return integer
    }

    /// Any number, kept as its literal.
    func number(_ key: String, in range: ClosedRange<Double>? = nil) throws(InvalidField) -> RawJSON? {
        guard let value = self.raw(key) else { return nil }
        guard case .number(let literal) = value, let number = Double(literal), number.isFinite else {
            throw self.wrongKind(key, "a number", value)
        }
        if let range, !range.contains(number) {
            throw InvalidField(self.path(of: key), "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// An object member, as sent.
    public func object(_ key: String) throws(InvalidField) -> RawJSON? {
        guard let value = self.raw(key) else { return nil }
        guard case .object = value else { throw self.wrongKind(key, "an object", value) }
        return value
    }

    /// An object member, read in turn.
    public func reader(_ key: String, allowed: Set<String>?) throws(InvalidField) -> JSONObjectReader? {
        guard let value = self.raw(key) else { return nil }
        return try JSONObjectReader(value, at: self.path(of: key), allowed: allowed)
    }

    /// An array member's elements, each with its path (`live_activities[2]`).
    func array(_ key: String) throws(InvalidField) -> [(value: RawJSON, path: String)]? {
        guard let value = self.raw(key) else { return nil }
        guard case .array(let elements) = value else { throw self.wrongKind(key, "an array", value) }
        return elements.enumerated().map { (value: $1, path: "\(self.path(of: key))[\($0)]") }
    }

    /// An array of strings; with `orOne`, a string alone counts as an array of one (`"ios_channel": "id"`).
    public func strings(_ key: String, orOne: Bool = false) throws(InvalidField) -> [String]? {
        guard let value = self.raw(key) else { return nil }
        if orOne, case .string(let one) = value { return [one] }
        guard case .array(let elements) = value else {
            throw self.wrongKind(key, orOne ? "a string or an array of strings" : "an array of strings", value)
        }
        return try elements.enumerated().map { index, element throws(InvalidField) in
            guard case .string(let string) = element else {
                throw InvalidField("\(self.path(of: key))[\(index)]", "expected a string, not \(element.kind)")
            }
            return string
        }
    }

    /// One of `choices`, as a string.
    func choice(_ key: String, _ choices: [String]) throws(InvalidField) -> String? {
        guard let value = try self.string(key) else { return nil }
        guard choices.contains(value) else {
            throw InvalidField(self.path(of: key), "must be one of \(choices.map { "'\($0)'" }.joined(separator: ", "))")
        }
        return value
    }

    func wrongKind(_ key: String, _ expected: String, _ value: RawJSON) -> InvalidField {
        InvalidField(self.path(of: key), "expected \(expected), not \(value.kind)")
    }

    static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
