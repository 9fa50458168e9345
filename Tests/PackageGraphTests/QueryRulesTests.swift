import Foundation
import Testing

/// Rows are described once, by name, and placeholders are bound, not numbered (``QueryRules``): a rule that nothing
/// checks does not last.
@Suite struct QueryRulesTests {
    @Test func sourcesKeepTheQueryRules() throws {
        let (violations, needlesslyAllowed) = try QueryRules.check(sources: PackageGraphTests.root.appendingPathComponent("Sources"))
        for violation in violations { Issue.record("\(violation)") }
        #expect(needlesslyAllowed.isEmpty, "these keep the rules now: take them off QueryRules.allowed: \(needlesslyAllowed)")
    }

    @Test func aBrokenRuleIsCaught() {
        let source = #"""
            // A comment may say `row.decode((A, B, C, D, E).self)` or "$1".
            let pair = try row.decode((Int64, UUID).self)
            let four = try row.decode((Int64, [String: Int], Date?, (Int, Int)).self)
            let wide = try row.decode(
                (Int64, UUID, String, Bool, Date).self)
            let query: PostgresQuery = "SELECT \(x) FROM t WHERE id = $2"
            let ids = "SELECT id FROM (\(Self.ids(named: "$4"))) ids \(names.map { $0 + "x" }.joined())"
            let raw = #"WHERE a = $3"#
            let price = "$\(count) each"
            let sorted = pairs.sorted { $0.0 < $1.0 }
            struct Insert: PostgresPreparedStatement {
                static let sql = """
                    INSERT INTO t (a, b) VALUES ($1, $2)
                    """
            }
            """#
        let violations = QueryRules.violations(in: source, file: "Store/Sample.swift")
        #expect(violations.map(\.line) == [4, 6, 7, 8])
        #expect(violations.first?.description.hasPrefix("Sources/Store/Sample.swift:4: decodes a positional row of 5 columns") == true)
        #expect(violations.dropFirst().allSatisfy { $0.problem.hasPrefix("numbers the placeholder $") })
        #expect(violations.dropFirst().map { String($0.problem.split(separator: " ")[3]) } == ["$2", "$4", "$3"])
    }
}
