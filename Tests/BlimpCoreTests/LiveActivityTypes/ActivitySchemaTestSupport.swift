import BlimpCore
import Foundation

/// Helpers for the schema tests: JSON from text, and a schema parsed from text.
enum SchemaText {
    static func json(_ text: String) throws -> RawJSON { try RawJSONParser.parse(text.utf8) }

    static func schema(_ text: String) throws -> ActivitySchema { try ActivitySchema.parse(try Self.json(text), at: "content_state") }

    /// The error `body` throws, or `nil` when it throws none.
    static func refusal(_ body: () throws(InvalidField) -> Void) -> InvalidField? {
        do throws(InvalidField) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// The refusal of the schema document `text`.
    static func parseRefusal(_ text: String) throws -> InvalidField? {
        let json = try Self.json(text)
        return Self.refusal { () throws(InvalidField) in _ = try ActivitySchema.parse(json, at: "content_state") }
    }
}
