import Foundation
import Testing

@testable import BlimpCore

/// Random and mutated input against the JSON parser and the audience grammar: whatever comes in, the answer is a
/// value or an error naming the field, never a crash; what is accepted writes back and reads again unchanged.
@Suite struct ParserFuzzTests {
    static let seeds: [String] = [
        #"{"audience": {"and": [{"tag": ["a", "b"], "group": "g"}, {"not": {"named_user": "u"}}]}, "n": [1, -0.5, 1e3, true, null]}"#,
        #"{"or": [{"tag": "x"}, {"ios_channel": "9adb1c2e-4f5a-4b6c-8d7e-0f1a2b3c4d5e"}, {"and": [{"tag": "y"}]}]}"#,
        #"["é\u00e9\ud83d\ude00", "\"\\\/\b\f\n\r\t", {"k": {"k2": [[], {}]}}, 123456789012345678901234]"#,
    ]

    /// Bytes flipped, dropped, repeated and inserted: the parser returns or throws, and what it returns round-trips.
    @Test(arguments: 0..<4) func mutatedJSONNeverCrashesTheParser(round: Int) throws {
        var random = SeededRandomNumberGenerator(seed: UInt64(round) &* 0x9E37_79B9 &+ 1)
        let alphabet = Array(#"{}[]":,\-+.eE0123456789tfnul aé"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]
        for _ in 0..<2_000 {
            var bytes = Array(Self.seeds.randomElement(using: &random)!.utf8)
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let index = Int.random(in: 0..<max(bytes.count, 1), using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !bytes.isEmpty: bytes[index] = alphabet.randomElement(using: &random)!
                case 1 where !bytes.isEmpty: bytes.remove(at: index)
                case 2: bytes.insert(alphabet.randomElement(using: &random)!, at: min(index, bytes.count))
                default: bytes.insert(contentsOf: bytes[index..<min(index + 8, bytes.count)], at: index)
                }
            }
            guard let value = try? RawJSONParser.parse(bytes) else { continue }
            #expect(try RawJSONParser.parse(value.text.utf8) == value, "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// Random JSON values as audiences: `Audience.parse` answers or names the field; an accepted audience reads back
    /// from its normal form unchanged, which is what the workers rely on.
    @Test(arguments: 0..<4) func randomAudiencesParseOrNameTheirFieldAndRoundTrip(round: Int) throws {
        var random = SeededRandomNumberGenerator(seed: UInt64(round) &+ 77)
        var accepted = 0
        for _ in 0..<2_000 {
            let value = Self.selector(depth: 0, random: &random)
            do throws(InvalidField) {
                let audience = try Audience.parse(value)
                accepted += 1
                #expect((try? Audience(normalized: try RawJSONParser.parse(audience.json.text.utf8))) == audience)
            } catch {
                #expect(error.path.hasPrefix("audience"), "\(error)")
            }
        }
        #expect(accepted > 100, "the generator should make valid audiences too")
    }

    static func selector(depth: Int, random: inout SeededRandomNumberGenerator) -> RawJSON {
        let kinds = ["tag", "named_user", "ios_channel", "channel", "and", "or", "not", "segment", "Tag", "group"]
        let kind = kinds.randomElement(using: &random)!
        let leaf: RawJSON =
            switch Int.random(in: 0..<6, using: &random) {
            case 0: .string("")
            case 1: .string(UUID().uuidString)
            case 2: .number("1")
            case 3: .array([.string("a"), .string("b")])
            case 4: .string(String(repeating: "é", count: Int.random(in: 1...300, using: &random)))
            default: .string("fans")
            }
        switch kind {
        case "and" where depth < 20, "or" where depth < 20:
            return .object([.init(kind, .array((0..<Int.random(in: 0...3, using: &random)).map { _ in Self.selector(depth: depth + 1, random: &random) }))])
        case "not" where depth < 20:
            return .object([.init(kind, Self.selector(depth: depth + 1, random: &random))])
        default:
            var members: [RawJSON.Member] = [.init(kind, leaf)]
            if Bool.random(using: &random) { members.append(.init("group", .string("g"))) }
            return Int.random(in: 0..<20, using: &random) == 0 ? .string("all") : .object(members)
        }
    }
}
