import Foundation
import BlimpCore

/// Random push requests for property tests: audiences in Airship's grammar up to the depth the intake accepts, and
/// content as any JSON (escapes, non-ASCII, numbers of every form), repeatable for a seed.
public struct RandomPushes {
    private var random: SeededRandomNumberGenerator

    public init(seed: UInt64) {
        self.random = SeededRandomNumberGenerator(seed: seed)
    }

    /// A push object's text: a Live Activity update of `name` with a random audience and content state.
    public mutating func update(name: String) -> String {
        #"{"audience": \#(self.audience()), "device_types": ["ios"], "notification": {"ios": {"live_activity": {"event": "update", "name": \#(Self.quoted(name)), "content_state": \#(self.object(depth: 0))}}}}"#
    }

    /// An audience selector as a request writes it.
    public mutating func audience(depth: Int = 1) -> String {
        let compound = depth < Audience.maximumDepth && Int.random(in: 0..<10, using: &self.random) < 6
        guard compound else { return self.atom() }
        let children = (0..<Int.random(in: 1...3, using: &self.random)).map { _ in self.audience(depth: depth + 1) }
        switch Int.random(in: 0..<3, using: &self.random) {
        case 0: return #"{"and": [\#(children.joined(separator: ", "))]}"#
        case 1: return #"{"or": [\#(children.joined(separator: ", "))]}"#
        default: return #"{"not": \#(children[0])}"#
        }
    }

    private mutating func atom() -> String {
        switch Int.random(in: 0..<5, using: &self.random) {
        case 0: return #"{"tag": \#(self.quotedName())}"#
        case 1: return #"{"tag": [\#(self.quotedName()), \#(self.quotedName())], "group": \#(self.quotedName())}"#
        case 2: return #"{"ios_channel": "\#(UUID.random().uuidString)"}"#
        case 3: return #"{"named_user": \#(self.quotedName())}"#
        default: return #"{"channel": ["\#(UUID.random().lowercaseString)", "\#(UUID.random().lowercaseString)"]}"#
        }
    }

    private mutating func value(depth: Int) -> String {
        switch Int.random(in: 0..<(depth < 4 ? 7 : 5), using: &self.random) {
        case 0: return self.quotedName()
        case 1: return Self.numbers.randomElement(using: &self.random)!
        case 2: return Bool.random(using: &self.random) ? "true" : "false"
        case 3: return "null"
        case 4: return String(Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &self.random))
        case 5: return "[" + (0..<Int.random(in: 0...3, using: &self.random)).map { _ in self.value(depth: depth + 1) }.joined(separator: ",") + "]"
        default: return self.object(depth: depth + 1)
        }
    }

    private mutating func object(depth: Int) -> String {
        let count = Int.random(in: 1...4, using: &self.random)
        return "{" + (0..<count).map { index in "\(Self.quoted("k\(index)" + Self.names.randomElement(using: &self.random)!)): \(self.value(depth: depth))" }
            .joined(separator: ", ") + "}"
    }

    private mutating func quotedName() -> String { Self.quoted(Self.names.randomElement(using: &self.random)!) }

    /// `text` as a JSON string, with escapes.
    static func quoted(_ text: String) -> String { RawJSON.string(text).text }

    private static let names = ["fans", "é", "日本", "😀", "a b", "quote\"d", "back\\slash", "tab\tin", "x/y", "ümlaut", "ok"]
    private static let numbers = ["0", "-0", "0.941", "1e3", "1E+2", "-1.5E-7", "123456789012345678901234", "4.9e-324", "1.7976931348623157e308"]
}
