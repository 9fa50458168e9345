import BlimpStore
import Testing

/// Every version after the first keeps the previous release working while it serves (schema.sql's header): nothing it
/// reads is dropped, renamed or retyped, no column it does not write becomes required, and a constraint is only
/// replaced by one of the same name that is added `NOT VALID` (so existing rows are checked apart from the lock).
@Suite struct MigrationRulesTests {
    @Test func everyVersionIsSafeWhileThePreviousReleaseServes() {
        for migration in Schema.migrations.dropFirst() {
            let statements = migration.statements.map { $0.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            let added = Set(statements.compactMap { $0.firstMatch(of: /ADD CONSTRAINT (\w+)/).map { String($0.1) } })
            for statement in statements {
                let version = "version \(migration.version): \(statement.prefix(120))"
                for forbidden in ["DROP TABLE", "DROP COLUMN", "RENAME ", "SET NOT NULL", "TRUNCATE"] {
                    #expect(!statement.contains(forbidden), "\(version)")
                }
                #expect(statement.firstMatch(of: /ALTER COLUMN \w+ (SET DATA )?TYPE/) == nil, "\(version)")
                if statement.contains("ADD COLUMN"), statement.contains("NOT NULL") {
                    #expect(statement.contains("DEFAULT"), "a required column without a default breaks the previous release's inserts: \(version)")
                }
                if statement.hasPrefix("ALTER TABLE"), let constraint = statement.firstMatch(of: /ADD CONSTRAINT \w+ (CHECK|FOREIGN KEY)/) {
                    #expect(statement.hasSuffix("NOT VALID;") || statement.hasSuffix("NOT VALID"), "\(constraint.0) must be added NOT VALID: \(version)")
                }
                if let dropped = statement.firstMatch(of: /DROP CONSTRAINT (\w+)/) {
                    #expect(added.contains(String(dropped.1)), "a constraint is only replaced, by one of its name: \(version)")
                }
            }
        }
    }
}
