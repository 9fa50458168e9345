/// A request field that breaks a rule: where it is (`channel.push_address`) and what is wrong, in words a caller can
/// act on. The API answers it with a 400 in Airship's error shape.
public struct InvalidField: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field's path, dot-separated, with array indexes in brackets (`live_activities[2].token`).
    public var path: String
    public var message: String

    public init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// The same error one level down: `prefix.path`.
    public func within(_ prefix: String) -> InvalidField {
        InvalidField(self.path.isEmpty ? prefix : "\(prefix).\(self.path)", self.message)
    }

    public var description: String { "\(self.path): \(self.message)" }
}
