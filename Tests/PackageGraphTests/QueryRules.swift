import Foundation

/// Two rules for the queries in Sources, read from the text as ``PackageGraph`` reads imports. A result row wider than
/// ``widestPositionalRow`` columns is described once by name (a `SelectedColumn` enum read through `NamedRow`), never
/// decoded as a tuple that must line up with its select list. No `$n` placeholder is numbered by hand: values are bound
/// through `PostgresQuery`'s interpolation or `QueryParameters`, so a placeholder cannot point at another value; only
/// a `PostgresPreparedStatement`'s `static let sql`, which must number its own, does.
enum QueryRules {
    /// The widest row that may be decoded as a positional tuple.
    static let widestPositionalRow = 4

    /// Files under Sources that may break the rules for now, with why.
    static let allowed: [String: String] = [
        "BlimpStore/Dispatch/DispatchStore+Targets.swift":
            "a fan-out's targets, numbered and positional; to be bound through QueryParameters and read as a named row",
    ]

    /// A place that breaks a rule, and what to do instead.
    struct Violation: Hashable, CustomStringConvertible {
        /// The file's path under Sources.
        var file: String
        var line: Int
        var problem: String

        var description: String { "Sources/\(self.file):\(self.line): \(self.problem)" }
    }

    /// Where `source`, the text of the file at `file` (under Sources), breaks the rules.
    static func violations(in source: String, file: String) -> [Violation] {
        let source = SwiftSource(source)
        let decodes = Self.positionalDecodes(in: source).filter { $0.width > Self.widestPositionalRow }.map {
            Violation(
                file: file, line: $0.line,
                problem: """
                    decodes a positional row of \($0.width) columns; describe the row once by name instead: a `SelectedColumn` \
                    enum for its select list, read through `NamedRow` (see Sources/BlimpStore/Database/Rows/)
                    """)
        }
        let placeholders = Self.numberedPlaceholders(in: source).map {
            Violation(
                file: file, line: $0.line,
                problem: """
                    numbers the placeholder \($0.placeholder) by hand; bind the value through `PostgresQuery`'s interpolation, \
                    or `QueryParameters.bind(_:)` where the SQL is put together from parts (only a prepared statement's \
                    `static let sql` numbers its own)
                    """)
        }
        return decodes + placeholders
    }

    /// Each `.decode((A, B, …).self)` in the code: its line and how many columns the tuple has.
    static func positionalDecodes(in source: SwiftSource) -> [(line: Int, width: Int)] {
        let code = source.code
        var decodes: [(line: Int, width: Int)] = []
        var rest = code.startIndex
        while let call = code[rest...].firstRange(of: Array(".decode(".utf8)) {
            rest = call.upperBound
            var index = call.upperBound
            while index < code.endIndex, [UInt8(ascii: " "), UInt8(ascii: "\n")].contains(code[index]) { index += 1 }
            guard index < code.endIndex, code[index] == UInt8(ascii: "(") else { continue }
            var (depth, commas) = (0, 0)
            for position in index..<code.endIndex {
                switch code[position] {
                case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "<"): depth += 1
                case UInt8(ascii: ")"), UInt8(ascii: "]"): depth -= 1
                case UInt8(ascii: ">") where code[position - 1] != UInt8(ascii: "-"): depth -= 1
                case UInt8(ascii: ",") where depth == 1: commas += 1
                default: break
                }
                if depth == 0 { break }
            }
            decodes.append((source.line(ofCode: call.lowerBound), commas + 1))
        }
        return decodes
    }

    /// Each `$` and digits in a string literal that is not a prepared statement's SQL: its line and the placeholder.
    static func numberedPlaceholders(in source: SwiftSource) -> [(line: Int, placeholder: String)] {
        var found: [(line: Int, placeholder: String)] = []
        for literal in source.literals where !literal.isPreparedStatementSQL {
            let text = literal.text
            for index in text.indices where text[index] == UInt8(ascii: "$") {
                let digits = text[(index + 1)...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                if !digits.isEmpty { found.append((literal.lines[index], "$" + String(decoding: digits, as: UTF8.self))) }
            }
        }
        return found
    }

    /// The rules as the Swift files under `sources` keep them: the violations outside ``allowed``, and the allowed
    /// files that no longer break a rule (which should leave the list).
    static func check(sources: URL) throws -> (violations: [Violation], needlesslyAllowed: [String]) {
        var violations: [Violation] = []
        var allowedAndBroken: Set<String> = []
        for file in try PackageGraph.swiftFiles(in: sources) {
            let path = String(file.path.dropFirst(sources.standardizedFileURL.path.count + 1))
            let found = Self.violations(in: try String(contentsOf: file, encoding: .utf8), file: path)
            if Self.allowed[path] != nil {
                if !found.isEmpty { allowedAndBroken.insert(path) }
            } else {
                violations += found
            }
        }
        return (violations.sorted { ($0.file, $0.line) < ($1.file, $1.line) }, Self.allowed.keys.filter { !allowedAndBroken.contains($0) }.sorted())
    }
}
