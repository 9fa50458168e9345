import BlimpStore
import Testing

/// Every version after the first keeps the previous release working while it serves (schema.sql's header): nothing it
/// reads is dropped, renamed or retyped, no column it does not write becomes required, and a constraint is only
/// replaced by one of the same name that is added `NOT VALID` (so existing rows are checked apart from the lock).
/// One exception: a table (or index) renamed aside in a version that creates another under its name, which the
/// previous release then uses (delivery outcomes moved to a partitioned table); the table renamed aside may be dropped.
@Suite struct MigrationRulesTests {
    @Test func everyVersionIsSafeWhileThePreviousReleaseServes() {
        for migration in Schema.migrations.dropFirst() {
            let statements = migration.statements.map { $0.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            let added = Set(statements.compactMap { $0.firstMatch(of: /ADD CONSTRAINT (\w+)/).map { String($0.1) } })
            let created = Set(statements.compactMap { $0.firstMatch(of: /^CREATE (TABLE|INDEX) (\w+)/).map { String($0.2) } })
            let renamedAside = statements.compactMap { $0.firstMatch(of: /^ALTER (TABLE|INDEX) (\w+) RENAME TO (\w+);?$/) }
                .filter { created.contains(String($0.2)) }
            for statement in statements {
                let version = "version \(migration.version): \(statement.prefix(120))"
                let replacing = renamedAside.contains { $0.0 == statement[...] } || renamedAside.contains { statement.contains("DROP TABLE \($0.3)") }
                for forbidden in ["DROP TABLE", "DROP COLUMN", "RENAME ", "SET NOT NULL", "TRUNCATE"] where !replacing {
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
