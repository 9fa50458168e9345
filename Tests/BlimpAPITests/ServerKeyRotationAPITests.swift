import BlimpCLI
import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import BlimpAPI

/// A rotation of the server key from A to B, as an operator runs it, through the API and the worker's store calls:
/// an app, a device, its token and its contact ids from a deployment on A; every process on B with A as the previous
/// key; `rotate`; then B alone. Nothing a device or the app holds stops working, and no contact id changes.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct ServerKeyRotationAPITests {
    static let channel = #"{"channel": {"device_type": "ios"}}"#

    /// What a device and its app hold, from the deployment on A.
    struct Held {
        let appKey: String
        let appSecret: String
        let previousAppSecret: String
        let channelID: String
        let channelToken: String
        let contactIDs: [String]
    }

    @Test func rotatingTheServerKeyKeepsSecretsTokensAndContactIDs() async throws {
        try await TestDatabase.withFreshDatabase { _, database in
            let a = ServerKey.generate()
            let b = ServerKey.generate()
            let rotating = try ServerKey(base64: b.base64, previousBase64: a.base64)
            let store = AppStore(client: database, logger: TestDatabase.logger)

            // On A: an app whose app secret was rotated with an overlap, a channel, its token and its contacts.
            let (app, issued) = try await TestApps.create(named: "Scores", in: database, serverKey: a.key)
            let appSecret = try await store.rotateAppSecret(appKey: app.appKey, overlap: 7 * 86400, serverKey: a.key)
            let held = try await Self.api(database, a.key) { client in
                let created = try await client.send(.post, "/api/channels", APIHarness.basic(app.appKey, appSecret), Self.channel)
                let channelID = try #require(created.body["channel_id"] as? String)
                let signed = SDKRequestHeaders.channelSigned(appKey: app.appKey, signature: SDKSignature(appSecret: appSecret), channelID: channelID)
                let token = try #require(try await client.send(.get, "/api/auth/device", APIHarness.fields(signed)).body["token"] as? String)
                return Held(
                    appKey: app.appKey, appSecret: appSecret, previousAppSecret: issued.appSecret, channelID: channelID, channelToken: token,
                    contactIDs: try await Self.contactIDs(client, appKey: app.appKey, channelID: channelID, token: token))
            }
            // The ids are those Blimp derived from A before contact ids had a key of their own (`UUID`'s text: upper case).
            let legacy = ContactIDKey.derived(from: a.key)
            #expect(
                held.contactIDs == [
                    legacy.stableUUID(for: "channel:\(app.appKey):\(held.channelID.uppercased())").uuidString.lowercased(),
                    legacy.stableUUID(for: "named-user:\(app.appKey):fan-1").uuidString.lowercased(),
                ])

            // 1. Every process on B with A as the previous key.
            let tokenUnderB = try await Self.api(database, rotating) { client in
                try await Self.expectEverythingWorks(client, held, store: store, serverKey: rotating, app: app)
                #expect(try await Self.contactIDs(client, appKey: held.appKey, channelID: held.channelID, token: held.channelToken) == held.contactIDs)
                let signed = SDKRequestHeaders.channelSigned(appKey: app.appKey, signature: SDKSignature(appSecret: appSecret), channelID: held.channelID)
                return try #require(try await client.send(.get, "/api/auth/device", APIHarness.fields(signed)).body["token"] as? String)
            }
            // B alone, too early: what A sealed fails, naming the app, never a secret.
            await #expect {
                _ = try await store.credentials(appKey: app.appKey, serverKey: b.key)
            } throws: { error in
                "\(error)" == "the app secret of app \(app.appKey) cannot be read: \(ServerKeyError.cannotOpen)"
            }
            await #expect {
                _ = try await store.delivery(appID: app.id, serverKey: b.key)
            } throws: { error in
                "\(error)" == "the APNs key of app \(app.appKey) cannot be read: \(ServerKeyError.cannotOpen)"
            }
            try await Self.api(database, b.key) { client in
                let answer = try await client.send(.post, "/api/channels", APIHarness.basic(app.appKey, appSecret), Self.channel)
                #expect(answer.status == .internalServerError)
            }

            // 2. rotate: the .p8, both app secrets and the contact-id key.
            let rotated = try await ServerKeyRotation(client: database, logger: TestDatabase.logger, serverKey: rotating).rotate()
            #expect(rotated.previous == 4 && rotated.current == 0 && rotated.unopenable.isEmpty)

            // 3. B alone: the same, except tokens signed under A, which have expired by now in a real rotation.
            try await Self.api(database, b.key) { client in
                try await Self.expectEverythingWorks(client, held, store: store, serverKey: b.key, app: app)
                #expect(try await Self.contactIDs(client, appKey: held.appKey, channelID: held.channelID, token: tokenUnderB) == held.contactIDs)
                let withOldToken = APIHarness.fields(SDKRequestHeaders.channelToken(appKey: app.appKey, token: held.channelToken) + [("X-UA-Channel-ID", held.channelID)])
                #expect(try await client.send(.post, "/api/contacts/identify/v2", withOldToken, Self.resolve).status == .unauthorized)
            }
        }
    }

    static let resolve = #"{"action": {"type": "resolve"}}"#

    /// The API on `database` with `serverKey`, fresh (no credentials cached), for `body`.
    static func api<T: Sendable>(
        _ database: Database, _ serverKey: ServerKey, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        let router = BlimpServer.buildRouter(database: database, configuration: APIConfiguration(serverKey: serverKey), logger: TestDatabase.logger)
        return try await Application(router: router).test(.router, body)
    }

    /// The channel's anonymous contact id and the named user fan-1's, asked with the channel's `token`.
    static func contactIDs(_ client: any TestClientProtocol, appKey: String, channelID: String, token: String) async throws -> [String] {
        let headers = APIHarness.fields(SDKRequestHeaders.channelToken(appKey: appKey, token: token) + [("X-UA-Channel-ID", channelID)])
        var ids: [String] = []
        for action in [Self.resolve, #"{"action": {"type": "identify", "named_user_id": "fan-1"}}"#] {
            let answer = try await client.send(.post, "/api/contacts/identify/v2", headers, action)
            #expect(answer.status == .ok)
            ids.append(try #require((answer.body["contact"] as? [String: Any])?["contact_id"] as? String))
        }
        // Back to anonymous, so that the next resolve asks for the channel's contact again.
        #expect(try await client.send(.post, "/api/contacts/identify/v2", headers, #"{"action": {"type": "reset"}}"#).status == .ok)
        return ids
    }

    /// Both app secrets authenticate, in Basic and in the SDK's signatures, and the worker opens the `.p8`.
    static func expectEverythingWorks(
        _ client: any TestClientProtocol, _ held: Held, store: AppStore, serverKey: ServerKey, app: App
    ) async throws {
        for secret in [held.appSecret, held.previousAppSecret] {
            #expect(try await client.send(.post, "/api/channels", APIHarness.basic(held.appKey, secret), Self.channel).status == .created)
            let signed = SDKRequestHeaders.appSigned(appKey: held.appKey, signature: SDKSignature(appSecret: secret))
            #expect(try await client.send(.post, "/api/channels", APIHarness.fields(signed), Self.channel).status == .created)
        }
        #expect(try await store.delivery(appID: app.id, serverKey: serverKey).key.keyID == app.apnsKeyID)
    }
}
