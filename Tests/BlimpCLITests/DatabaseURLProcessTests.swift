import BlimpTestSupport
import Foundation
import Testing

/// `DATABASE_URL`'s libpq options through `blimp` itself, against a PostgreSQL of the test's own with TLS on and a
/// certificate from a CA the test made: `sslmode=verify-full` with `sslrootcert` trusts that CA and no other, and
/// `application_name` is what PostgreSQL shows for the connections.
@Suite struct DatabaseURLProcessTests {
    @Test func verifyFullTrustsTheNamedCAAndTheServerShowsTheApplicationName() async throws {
        try await PostgresServer.withStarted { database, folder in
            let certificates = try TestCertificates(in: folder.appendingPathComponent("ca"))
            let otherCA = try TestCertificates(in: folder.appendingPathComponent("other-ca")).authority
            try await database.enableTLS(certificates)
            func url(trusting authority: URL) -> String {
                database.url + "?sslmode=verify-full&sslrootcert=\(authority.path)&connect_timeout=5&application_name=blimp-tls-test"
            }

            let refused = try await BlimpProcess.run(["migrate"], environment: ["DATABASE_URL": url(trusting: otherCA)])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("cannot connect to the database") && refused.stderr.contains("CERTIFICATE_VERIFY_FAILED"), "\(refused.stderr)")
            #expect(try await database.query("SELECT to_regclass('schema_migrations') IS NULL") == ["t"])

            let environment = ["DATABASE_URL": url(trusting: certificates.authority), "BLIMP_SECRET_KEY": TestKeys.serverKeyBase64()]
            let migrated = try await BlimpProcess.run(["migrate"], environment: environment)
            #expect(migrated.status == 0, "\(migrated.stderr)")
            #expect(try await database.query("SELECT count(*) > 0 FROM schema_migrations") == ["t"])

            let port = freePort()
            let api = try BlimpProcess(["api", "--port", "\(port)"], environment: environment)
            defer { api.killIfRunning() }
            try await waitUntilServing("http://127.0.0.1:\(port)/ready")
            // The pool opens its connections as it needs them; /ready has needed one.
            let sessions = """
                SELECT count(*) > 0 FROM pg_stat_activity JOIN pg_stat_ssl USING (pid)
                    WHERE application_name = 'blimp-tls-test' AND ssl
                """
            let deadline = ContinuousClock.now + .seconds(30)
            while try await database.query(sessions) != ["t"], ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await database.query(sessions) == ["t"])
            api.signal()
            #expect(await api.wait().status == 0)
        }
    }
}
