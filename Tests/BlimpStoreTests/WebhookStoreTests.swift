import BlimpCore
import BlimpTestSupport
import Foundation
import PostgresNIO
import Testing

@testable import BlimpStore

/// Webhook endpoints as workers claim them: only with something to send, one worker at a time, with the secrets that
/// sign (the previous one beside the new for a day after a rotation).
@Suite(.enabled(if: TestDatabase.isEnabled)) struct WebhookStoreTests {
    @Test func anEndpointIsClaimedOnlyWithSomethingToSendAndSignsWithBothSecretsAfterARotation() async throws {
        try await TestDatabase.withFreshDatabase { _, client in
            let key = ServerKey.generate().key
            let (app, _) = try await TestApps.create(named: "Scores", in: client, serverKey: key)
            let store = WebhookStore(client: client, logger: TestDatabase.logger)
            let secret = WebhookSecret.make()
            guard case .success(let endpoint) = try await store.create(
                appID: app.id, url: "https://93.184.216.34/hooks", types: nil, secret: secret, serverKey: key, now: Date(), by: .commandLine)
            else { Issue.record("not created"); return }
            // Nothing after its place: not claimed.
            #expect(try await store.claimDue(worker: "w1", lease: .seconds(60), limit: 10, serverKey: key, now: Date()).isEmpty)

            try await client.query(
                "INSERT INTO events (app_id, type, occurred_at) VALUES (\(app.id), 'SCHEDULE_CANCELLED', now())", logger: TestDatabase.logger)
            var claimed: [WebhookStore.ClaimedEndpoint] = []
            let deadline = ContinuousClock.now + .seconds(30)
            // Other suites' transactions on the server hold the horizon back a moment.
            while claimed.isEmpty, ContinuousClock.now < deadline {
                claimed = try await store.claimDue(worker: "w1", lease: .seconds(60), limit: 10, serverKey: key, now: Date())
                if claimed.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(claimed.map(\.id) == [endpoint.id] && claimed.first?.secrets == [secret])
            // Held by w1: no one else claims it meanwhile.
            #expect(try await store.claimDue(worker: "w2", lease: .seconds(60), limit: 10, serverKey: key, now: Date()).isEmpty)

            let next = WebhookSecret.make()
            #expect(try await store.rotate(appID: app.id, id: endpoint.id, to: next, serverKey: key, now: Date(), by: .commandLine))
            try await client.query("UPDATE webhooks SET lease_expires_at = now() - interval '1 second'", logger: TestDatabase.logger)
            let again = try await store.claimDue(worker: "w2", lease: .seconds(60), limit: 10, serverKey: key, now: Date())
            #expect(again.first?.secrets == [next, secret])
            // A day on, the old one no longer signs.
            try await client.query(
                "UPDATE webhooks SET lease_expires_at = NULL, previous_secret_until = now() - interval '1 second'", logger: TestDatabase.logger)
            #expect(try await store.claimDue(worker: "w3", lease: .seconds(60), limit: 10, serverKey: key, now: Date()).first?.secrets == [next])
        }
    }
}
