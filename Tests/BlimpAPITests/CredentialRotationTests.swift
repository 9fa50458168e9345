import BlimpCore
import BlimpStore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// Rotated secrets through the API: a new master secret replaces the old one at once; the previous app secret, which
/// installed apps carry, keeps working in Basic and in the SDK's signatures until its overlap ends by the API's clock.
///
/// Each test rotates before the API first reads the app, which would keep its credentials for 30 s.
@Suite(.enabled(if: TestDatabase.isEnabled)) struct CredentialRotationTests {
    static let channel = #"{"channel": {"device_type": "ios"}}"#

    @Test func theAPIRefusesARotatedMasterSecretAndTakesTheNewOne() async throws {
        try await APIHarness.run { harness, client in
            let appKey = harness.scores.app.appKey
            let secret = try await AppStore(client: harness.database, logger: TestDatabase.logger).rotateMasterSecret(appKey: appKey)

            let old = try await client.send(.get, "/api/channels", harness.master())
            #expect(old.status == .unauthorized)
            #expect(try await client.send(.get, "/api/channels", APIHarness.basic(appKey, secret)).status == .ok)
            // The other app is untouched.
            #expect(try await client.send(.get, "/api/channels", harness.master(harness.orders)).status == .ok)
        }
    }

    @Test func thePreviousAppSecretPassesBasicAndSignedRequestsDuringItsOverlapOnly() async throws {
        try await APIHarness.run { harness, client in
            let appKey = harness.scores.app.appKey
            let previous = harness.scores.credentials.appSecret
            let secret = try await AppStore(client: harness.database, logger: TestDatabase.logger)
                .rotateAppSecret(appKey: appKey, overlap: 3600, serverKey: harness.serverKey)
            func basic(_ secret: String) async throws -> HTTPResponse.Status {
                try await client.send(.post, "/api/channels", APIHarness.basic(appKey, secret), Self.channel).status
            }
            func signed(_ secret: String) async throws -> HTTPResponse.Status {
                let headers = SDKRequestHeaders.appSigned(appKey: appKey, signature: SDKSignature(appSecret: secret), now: harness.clock.now)
                return try await client.send(.post, "/api/channels", APIHarness.fields(headers), Self.channel).status
            }
            func channelSigned(_ secret: String) async throws -> HTTPResponse.Status {
                let headers = SDKRequestHeaders.channelSigned(
                    appKey: appKey, signature: SDKSignature(appSecret: secret), channelID: UUID().uuidString.lowercased(), now: harness.clock.now)
                return try await client.send(.get, "/api/auth/device", APIHarness.fields(headers)).status
            }

            // During the overlap, both secrets pass.
            harness.clock.advance(by: 3600 - 120)
            for secret in [previous, secret] {
                #expect(try await basic(secret) == .created)
                #expect(try await signed(secret) == .created)
                #expect(try await channelSigned(secret) == .ok)
            }

            // After it, only the new one.
            harness.clock.advance(by: 240)
            #expect(try await basic(previous) == .unauthorized)
            #expect(try await signed(previous) == .unauthorized)
            #expect(try await channelSigned(previous) == .unauthorized)
            #expect(try await basic(secret) == .created)
            #expect(try await signed(secret) == .created)
            #expect(try await channelSigned(secret) == .ok)
            // The previous app secret never had the master secret's rights.
            #expect(try await client.send(.get, "/api/channels", APIHarness.basic(appKey, previous)).status == .unauthorized)
        }
    }
}
