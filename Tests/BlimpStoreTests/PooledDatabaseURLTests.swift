import Testing

@testable import BlimpStore

/// `?pooler=transaction`: what Blimp sends, or leaves to the role, through a pooler in transaction mode.
@Suite struct PooledDatabaseURLTests {
    @Test func aPooledURLSendsNoStartupParameters() throws {
        let pooled = try DatabaseURL("postgres://blimp@pgbouncer:6432/blimp?sslmode=require&pooler=transaction")
        #expect(pooled.pooled && pooled.tlsMode == .require)
        #expect(pooled.description == "postgres://blimp@pgbouncer:6432/blimp?pooler=transaction")
        #expect(pooled.clientConfiguration(for: pooled.endpoints[0], statementTimeout: .seconds(15)).options.additionalStartupParameters.isEmpty)
        #expect(try pooled.connectionConfiguration(for: pooled.endpoints[0]).options.additionalStartupParameters.isEmpty)

        let direct = try DatabaseURL("postgres://blimp@db:5432/blimp")
        #expect(!direct.pooled)
        #expect(direct.clientConfiguration(for: direct.endpoints[0], statementTimeout: .milliseconds(2500)).options.additionalStartupParameters.map { "\($0)=\($1)" } == [
            "jit=off", "statement_timeout=2500",
        ])
        // `.zero` lifts whatever limit the role's defaults set, for migrations and the janitor.
        #expect(direct.clientConfiguration(for: direct.endpoints[0], statementTimeout: .zero).options.additionalStartupParameters.map { "\($0)=\($1)" } == [
            "jit=off", "statement_timeout=0",
        ])
        #expect(try direct.connectionConfiguration(for: direct.endpoints[0]).options.additionalStartupParameters.map { "\($0)=\($1)" } == ["jit=off"])
    }

    @Test(arguments: ["pooler=session", "pooler=", "pooler"])
    func onlyTransactionPoolingIsNamed(_ query: String) {
        #expect(throws: DatabaseError.self) { try DatabaseURL("postgres://blimp@h/blimp?\(query)") }
    }

    @Test func correctionsNameTheRoleInItsDatabase() throws {
        let url = try DatabaseURL("postgres://we%22ird@h/push%20db?pooler=transaction")
        let unset = PooledSessionSettings(jit: true, statementTimeout: .zero)
        #expect(unset.corrections(for: url, statementTimeout: .milliseconds(1500)) == [
            #"ALTER ROLE "we""ird" IN DATABASE "push db" SET jit = off"#,
            #"ALTER ROLE "we""ird" IN DATABASE "push db" SET statement_timeout = '1500ms'"#,
        ])
        // A shorter limit than the request's is the operator's choice; a longer one lets statements outlive requests.
        #expect(PooledSessionSettings(jit: false, statementTimeout: .seconds(5)).corrections(for: url, statementTimeout: .seconds(15)) == [])
        #expect(PooledSessionSettings(jit: false, statementTimeout: .seconds(30)).corrections(for: url, statementTimeout: .seconds(15)) == [
            #"ALTER ROLE "we""ird" IN DATABASE "push db" SET statement_timeout = '15s'"#
        ])
        #expect(unset.corrections(for: url, statementTimeout: nil) == [#"ALTER ROLE "we""ird" IN DATABASE "push db" SET jit = off"#])
    }
}
