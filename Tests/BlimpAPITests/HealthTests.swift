import BlimpCLI
import BlimpCore
import BlimpStore
import Foundation
import BlimpTestSupport
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BlimpAPI

@Suite struct HealthTests {
    @Test func healthAnswersWithoutADatabase() async throws {
        let database = Database(url: try DatabaseURL("postgres://blimp@127.0.0.1:1/none"), pool: "test", logger: TestDatabase.logger)
        let app = Application(router: BlimpServer.buildRouter(database: database, configuration: APIConfiguration(serverKey: ServerKey.generate().key), logger: TestDatabase.logger))
        try await app.test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(json(response.body) == ["ok": true])
            }
        }
    }

    @Test func readyIs503WhenTheDatabaseIsDown() async throws {
        let database = Database(url: try DatabaseURL("postgres://blimp@127.0.0.1:1/none"), pool: "test", logger: TestDatabase.logger)
        let app = Application(router: BlimpServer.buildRouter(database: database, configuration: APIConfiguration(serverKey: ServerKey.generate().key), logger: TestDatabase.logger), services: [database])
        try await app.test(.router) { client in
            try await client.execute(uri: "/ready", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(json(response.body) == ["ok": false, "error": "database unavailable"])
            }
        }
    }

    @Test(.enabled(if: TestDatabase.isEnabled)) func readyIs200WithTheDatabase() async throws {
        try await TestDatabase.withFreshDatabase { _, database in
            let app = Application(router: BlimpServer.buildRouter(database: database, configuration: APIConfiguration(serverKey: ServerKey.generate().key), logger: TestDatabase.logger))
            try await app.test(.router) { client in
                try await client.execute(uri: "/ready", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(json(response.body) == ["ok": true])
                }
            }
        }
    }

    /// A read-only database (a standby, or a primary being demoted in a failover) answers, but takes no write: `/ready`
    /// says so, and a push is a 503 with `Retry-After`, not a 500, so that its client tries again.
    @Test(.enabled(if: TestDatabase.isEnabled)) func aReadOnlyDatabaseIsNotReadyAndAPushIsA503() async throws {
        try await TestDatabase.withFreshDatabase { url, admin in
            let serverKey = ServerKey.generate().key
            let (app, credentials) = try await TestApps.create(named: "Scores", in: admin, serverKey: serverKey)
            let name = try await admin.query("SELECT current_database()", logger: TestDatabase.logger).collect()[0].decode(String.self)
            try await admin.query("ALTER DATABASE \(unescaped: name) SET default_transaction_read_only = on", logger: TestDatabase.logger)
            // Blimp works with a server that takes writes (`target_session_attrs=read-write`, the default) …
            let refusal = await #expect(throws: DatabaseError.self) { try await DatabaseURL(url).checkReachable(logger: TestDatabase.logger) }
            #expect(refusal.map { "\($0)" }?.hasSuffix(": it is read-only") == true, "\(String(describing: refusal))")
            // … unless told to take any: then readiness and the API say what they find.
            let any = url + (url.contains("?") ? "&" : "?") + "target_session_attrs=any"
            try await DatabaseURL(any).withDatabase(logger: TestDatabase.logger) { database in
                let router = BlimpServer.buildRouter(
                    database: database, configuration: APIConfiguration(serverKey: serverKey), logger: TestDatabase.logger)
                try await Application(router: router).test(.router) { client in
                    try await client.execute(uri: "/ready", method: .get) { response in
                        #expect(response.status == .serviceUnavailable)
                        #expect(json(response.body) == ["ok": false, "error": "database is read-only"])
                    }
                    let push = #"{"audience": "all", "device_types": ["ios"], "notification": {"alert": "Goal!"}}"#
                    try await client.execute(
                        uri: "/api/push", method: .post, headers: APIHarness.basic(app.appKey, credentials.masterSecret),
                        body: ByteBuffer(string: push)
                    ) { response in
                        #expect(response.status == .serviceUnavailable, "\(String(buffer: response.body))")
                        #expect(response.headers[.retryAfter] != nil)
                        #expect(json(response.body)["ok"] as? Bool == false)
                    }
                }
            }
        }
    }
}

/// A JSON object body as a dictionary that compares by value.
func json(_ body: ByteBuffer) -> NSDictionary {
    (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? NSDictionary ?? [:]
}
