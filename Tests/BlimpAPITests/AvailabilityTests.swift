import BlimpCLI
import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Testing

@testable import BlimpAPI

@Suite(.enabled(if: TestDatabase.isEnabled)) struct AvailabilityTests {
    /// An unknown app key is remembered for a few seconds: a flood of made-up keys does not become a flood of queries.
    /// Here the key comes to exist meanwhile, and the directory still answers from its memory.
    @Test func unknownAppKeysAreRememberedBriefly() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let serverKey = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: serverKey)
            // A clock that stands still: on a loaded machine the update below has taken longer than the memory lasts.
            let clock = TestClock(Date())
            let directory = AppDirectory(
                store: AppStore(client: client, logger: TestDatabase.logger), serverKey: serverKey, now: { clock.now })
            let newKey = String(app.appKey.reversed())
            #expect(try await directory.credentials(appKey: newKey) == nil)
            // (The sealed app secret is bound to the old key: the app keeps Basic authentication only.)
            try await client.query("UPDATE apps SET app_key = \(newKey), app_secret_sealed = NULL", logger: TestDatabase.logger)
            #expect(try await directory.credentials(appKey: newKey) == nil, "answered from memory, not the database")
            #expect(try await directory.credentials(appKey: newKey, fresh: true)?.app.id == app.id)
        }
    }

    /// A database that does not answer is a 503 with `Retry-After` once the request's time is up, never a hang.
    @Test func aDatabaseThatDoesNotAnswerIs503() async throws {
        try await TestDatabase.withUnreachableDatabase { database, quiet in
            var limits = APILimits()
            limits.requestTimeout = .seconds(1)
            let configuration = APIConfiguration(serverKey: ServerKey.generate().key, limits: limits)
            let app = Application(router: BlimpServer.buildRouter(database: database, configuration: configuration, logger: quiet))
            try await app.test(.router) { client in
                let started = ContinuousClock.now
                let answer = try await client.send(
                    .post, "/api/channels", APIHarness.basic(String(repeating: "A", count: 22), "secret"), #"{"channel": {"device_type": "ios"}}"#)
                #expect(answer.status == .serviceUnavailable)
                #expect(answer.body["error_code"] as? Int == 50300)
                #expect(answer.headers[.retryAfter] == "1")
                // Well under the store's own 30 s guard: the request's timeout answered, not a hang. (Alone it takes 1 s;
                // beside the whole suite on two cores, up to 6 s were seen.)
                #expect(started.duration(to: .now) < .seconds(15))
            }
        }
    }
    /// While the database watch finds no database, API requests are refused at once: the 503 is the watch's, not the
    /// request deadline's (a minute here). `/health` still answers.
    @Test func aDatabaseTheWatchFindsDownIsRefusedAtOnce() async throws {
        try await TestDatabase.withUnreachableDatabase { database, quiet in
            let configuration = APIConfiguration(serverKey: ServerKey.generate().key, limits: APIHarness.limits)
            let app = Application(router: BlimpServer.buildRouter(database: database, configuration: configuration, logger: quiet))
            try await app.test(.router) { client in
                let deadline = ContinuousClock.now + .seconds(30)
                while !database.isDown, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
                #expect(database.isDown)
                let answer = try await client.send(
                    .post, "/api/channels", APIHarness.basic(String(repeating: "A", count: 22), "secret"), #"{"channel": {"device_type": "ios"}}"#)
                #expect(answer.status == .serviceUnavailable)
                #expect((answer.body["details"] as? [String: Any])?["error"] as? String == "no database server answers; try again shortly", "\(answer.body)")
                #expect(answer.headers[.retryAfter] == "1")
                #expect(try await client.send(.get, "/health", [:]).status == .ok)
            }
        }
    }
}
