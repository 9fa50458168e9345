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
        let database = PostgresClient(configuration: try DatabaseURL("postgres://blimp@127.0.0.1:1/none").clientConfiguration())
        let app = Application(router: BlimpServer.buildRouter(database: database, configuration: APIConfiguration(serverKey: ServerKey.generate().key), logger: TestDatabase.logger))
        try await app.test(.router) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(json(response.body) == ["ok": true])
            }
        }
    }

    @Test func readyIs503WhenTheDatabaseIsDown() async throws {
        let database = PostgresClient(configuration: try DatabaseURL("postgres://blimp@127.0.0.1:1/none").clientConfiguration())
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
}

/// A JSON object body as a dictionary that compares by value.
func json(_ body: ByteBuffer) -> NSDictionary {
    (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? NSDictionary ?? [:]
}
