import BlimpCLI
import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import PostgresNIO
import Testing

@testable import BlimpAPI

/// The API on a fresh database with two apps, "Scores" and "Orders", served in-process (`.router`) or on a real
/// loopback port (`.live`).
struct APIHarness {
    let scores: (app: App, credentials: AppCredentials)
    let orders: (app: App, credentials: AppCredentials)
    let clock: TestClock
    let database: Database
    /// The `BLIMP_SECRET_KEY` the API runs with, for tests that change an app's sealed secrets.
    let serverKey: ServerKey

    static let publicURL = "https://push.example.com"

    /// Production's limits, with a minute per request instead of 15 s: these tests check answers, not speed, and at
    /// the start of a full run, while a hundred test databases migrate at once, a request has taken longer (a 503 in
    /// two CI runs of one session). AvailabilityTests sets its own timeout to test the 503.
    static var limits: APILimits {
        var limits = APILimits()
        limits.requestTimeout = .seconds(60)
        return limits
    }

    static func run(
        _ mode: TestingSetup = .router,
        publicURL: String? = Self.publicURL,
        limits: APILimits = Self.limits,
        adminToken: String? = nil,
        masterSecretSignIn: Bool = true,
        broadcastChannels: (any APNsBroadcastChannels)? = nil,
        _ body: @escaping @Sendable (APIHarness, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { _, database in
            let serverKey = ServerKey.generate().key
            let harness = APIHarness(
                scores: try await TestApps.create(named: "Scores", in: database, serverKey: serverKey),
                orders: try await TestApps.create(named: "Orders", in: database, serverKey: serverKey),
                clock: TestClock(Date()),
                database: database,
                serverKey: serverKey
            )
            let configuration = APIConfiguration(
                serverKey: serverKey, publicURL: publicURL, limits: limits, broadcastChannels: broadcastChannels, now: { harness.clock.now })
            let app = Application(
                router: BlimpServer.buildRouter(
                    database: database, configuration: configuration, adminToken: adminToken, masterSecretSignIn: masterSecretSignIn,
                    logger: TestDatabase.logger)
            )
            try await app.test(mode) { client in try await body(harness, client) }
        }
    }

    /// `Basic app_key:secret` with Airship's Accept header.
    static func basic(_ appKey: String, _ secret: String) -> HTTPFields {
        Self.fields([
            ("Authorization", "Basic " + Data("\(appKey):\(secret)".utf8).base64EncodedString()),
            ("Accept", "application/vnd.urbanairship+json; version=3;"),
            ("Content-Type", "application/json"),
        ])
    }

    func master(_ app: (app: App, credentials: AppCredentials)? = nil) -> HTTPFields {
        let app = app ?? self.scores
        return Self.basic(app.app.appKey, app.credentials.masterSecret)
    }

    static func fields(_ pairs: [(String, String)]) -> HTTPFields {
        HTTPFields(pairs.map { HTTPField(name: HTTPField.Name($0.0)!, value: $0.1) })
    }
}

/// A JSON body as a dictionary.
func object(_ body: ByteBuffer) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
}

extension TestClientProtocol {
    /// Sends a request with a JSON text body.
    @discardableResult
    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        _ headers: HTTPFields,
        _ json: String? = nil
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields) {
        try await self.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }) {
            ($0.status, object($0.body), $0.headers)
        }
    }
}

extension APIHarness {
    /// Registers `channels` channels of the Scores app, then runs Python/`script` against the live API (`client`) with
    /// `BLIMP_URL` (the API's address and `path`), `APP_KEY`, `APP_SECRET`, `MASTER_SECRET` and `CHANNEL_IDS` set.
    func runPython(_ script: String, on client: any TestClientProtocol, channels: Int, path: String = "") async throws -> (status: Int32, output: String) {
        let port = try #require(client.port)
        var ids: [String] = []
        for _ in 0..<channels { ids.append(try await ServerAPITests.register(client, self.scores)) }
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/\(script)")
        return try await ChildProcess.python(file.path, environment: [
            "BLIMP_URL": "http://127.0.0.1:\(port)\(path)",
            "APP_KEY": self.scores.app.appKey,
            "APP_SECRET": self.scores.credentials.appSecret,
            "MASTER_SECRET": self.scores.credentials.masterSecret,
            "CHANNEL_IDS": ids.joined(separator: ","),
        ])
    }
}
