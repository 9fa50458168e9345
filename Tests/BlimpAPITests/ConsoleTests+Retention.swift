import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import BlimpAPI

extension ConsoleTests {
    /// The app page shows each retention in effect and sets the app's own: a value that is not a retention, or below
    /// its floor, is a 400 page that says why; the change is on the audit trail. A push page of an id whose report aged
    /// out says it expired; one never issued is not found.
    @Test func theAppPageSetsRetentionAndAnAgedOutPushSaysItExpired() async throws {
        try await APIHarness.run(adminToken: Self.adminToken) { harness, client in
            let admin = try #require(try await Self.signIn(client, [("admin_token", Self.adminToken)]).session)
            let path = "/console/apps/\(harness.scores.app.appKey)"
            let page = try await Self.get(client, path, cookie: admin)
            #expect(page.status == .ok)
            #expect(page.text.contains(#"id="retention-pushes">30d (the deployment's)"#))
            let csrf = try #require(page.csrf)

            for (pushes, rule) in [("2h", "below the floor of 24h"), ("1e30s", "is not a duration"), ("-1d", "is not a duration"), ("0s", "more than 0")] {
                let refused = try await Self.post(
                    client, "\(path)/retention", cookie: admin,
                    [("csrf", csrf), ("retention_pushes", pushes), ("retention_outcomes", ""), ("retention_audit", "")])
                #expect(refused.status == .badRequest, "\(pushes)")
                #expect(refused.text.contains("role=\"alert\"") && refused.text.contains(rule), "\(pushes)")
            }
            let set = try await Self.post(
                client, "\(path)/retention", cookie: admin,
                [("csrf", csrf), ("retention_pushes", "90d"), ("retention_outcomes", ""), ("retention_audit", "400d")])
            #expect(set.status == .ok)
            #expect(set.text.contains(#"id="retention-pushes">90d (this app's)"#) && set.text.contains(#"id="retention-outcomes">7d (the deployment's)"#))
            let audit = try await Self.get(client, "/console/audit", cookie: admin)
            #expect(audit.text.contains("app.changed") && audit.text.contains("retention_pushes"))

            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)/pushes"
            let aged = UUIDv7.make(at: harness.clock.now.addingTimeInterval(-91 * 86400)).uuidString.lowercased()
            let expired = try await Self.get(client, "\(base)/\(aged)", cookie: session)
            #expect(expired.status == .notFound && expired.text.contains("This push expired: reports are kept for 90d"))
            let young = UUIDv7.make(at: harness.clock.now.addingTimeInterval(-89 * 86400)).uuidString.lowercased()
            let unknown = try await Self.get(client, "\(base)/\(young)", cookie: session)
            #expect(unknown.status == .notFound && !unknown.text.contains("expired"))
        }
    }
}
