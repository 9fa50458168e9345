import BlimpCore
import Foundation
import Testing

/// Random schema documents and random content: every answer is a schema or a refusal naming a path, never a crash;
/// what is accepted reads back from its canonical form unchanged, is safe against itself, and checks content.
@Suite struct ActivitySchemaFuzzTests {
    static let keywords = [
        "type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "minLength",
        "maxLength", "enum", "minimum", "maximum", "format", "title", "$ref", "oneOf",
    ]
    static let types = ["object", "array", "string", "integer", "number", "boolean", "null", "float"]

    @Test(arguments: 0..<4) func randomDocumentsParseOrNameTheirKeyword(round: Int) {
        var random = SeededRandomNumberGenerator(seed: UInt64(round) &* 0x5851_F42D &+ 3)
        var accepted = 0
        for _ in 0..<1_000 {
            let document = RawJSON.object([.init("type", .string("object"))] + Self.members(depth: 0, random: &random))
            do throws(InvalidField) {
                let schema = try ActivitySchema.parse(document, at: "content_state")
                accepted += 1
                #expect((try? ActivitySchema.parse(schema.json, at: "content_state")) == schema, "\(document.text)")
                #expect(schema.breakingChanges(from: schema).isEmpty, "\(document.text)")
                for _ in 0..<5 {
                    do throws(InvalidField) {
                        try schema.check(Self.value(depth: 0, random: &random), at: "content_state", now: Date())
                    } catch {
                        #expect(error.path.hasPrefix("content_state"), "\(error)")
                    }
                }
            } catch {
                #expect(error.path.hasPrefix("content_state"), "\(error)")
            }
        }
        #expect(accepted > 50, "the generator should make valid schemas too")
    }

    /// Random examples: the derived schema reads back from its canonical form and accepts its example.
    @Test(arguments: 0..<4) func randomExamplesDeriveSchemasTheyPass(round: Int) {
        var random = SeededRandomNumberGenerator(seed: UInt64(round) &+ 11)
        for _ in 0..<1_000 {
            let example = RawJSON.object((0..<4).map { index in .init("p\(index)", Self.value(depth: 0, random: &random)) })
            do throws(InvalidField) {
                let schema = try ActivitySchema.derived(from: example, at: "attributes")
                #expect((try? ActivitySchema.parse(schema.json, at: "attributes")) == schema, "\(example.text)")
                try schema.check(example, at: "attributes", now: Date())
            } catch {
                Issue.record("\(example.text): \(error)")
            }
        }
    }

    static func members(depth: Int, random: inout SeededRandomNumberGenerator) -> [RawJSON.Member] {
        (0..<Int.random(in: 0...3, using: &random)).map { _ in
            let key = Self.keywords.randomElement(using: &random)!
            return .init(key, Self.keywordValue(key, depth: depth, random: &random))
        }
    }

    static func keywordValue(_ key: String, depth: Int, random: inout SeededRandomNumberGenerator) -> RawJSON {
        switch key {
        case "type":
            let type = RawJSON.string(Self.types.randomElement(using: &random)!)
            return Bool.random(using: &random) ? type : .array([type, .string("null")])
        case "properties" where depth < 5:
            return .object((0..<Int.random(in: 0...3, using: &random)).map { index in
                .init("p\(index)", .object(Self.members(depth: depth + 1, random: &random)))
            })
        case "items" where depth < 5: return .object(Self.members(depth: depth + 1, random: &random))
        case "required": return .array([.string("p\(Int.random(in: 0...2, using: &random))")])
        case "additionalProperties": return .bool(Bool.random(using: &random))
        case "enum": return .array([Self.value(depth: 3, random: &random), Self.value(depth: 3, random: &random)])
        case "format": return .string(Bool.random(using: &random) ? "date" : "uri")
        default: return Self.value(depth: 3, random: &random)
        }
    }

    static func value(depth: Int, random: inout SeededRandomNumberGenerator) -> RawJSON {
        switch Int.random(in: 0..<(depth < 3 ? 9 : 7), using: &random) {
        case 0: .null
        case 1: .bool(Bool.random(using: &random))
        case 2: .number(["0", "-1", "1.5", "1e2", "99999999999999999999", "800000000"].randomElement(using: &random)!)
        case 3: .string(["", "a", "first", "é"].randomElement(using: &random)!)
        case 4, 5, 6: .number(String(Int.random(in: -3...12, using: &random)))
        case 7: .array((0..<Int.random(in: 0...3, using: &random)).map { _ in Self.value(depth: depth + 1, random: &random) })
        default:
            .object((0..<Int.random(in: 0...3, using: &random)).map { index in
                .init("p\(index)", Self.value(depth: depth + 1, random: &random))
            })
        }
    }
}
