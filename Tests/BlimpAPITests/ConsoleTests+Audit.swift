import BlimpCore
import BlimpTestSupport
import Foundation
import HTTPTypes
import Testing

@testable import BlimpAPI

extension ConsoleTests {
    /// The console's Audit pages: what a master-secret session and the admin did, by whom and on what, escaped and
    /// filtered; the admin's page spans every app.
    @Test func theAuditPagesShowWhoDidWhat() async throws {
        try await APIHarness.run(adminToken: Self.adminToken) { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let pushID = try await Self.composeAndSend(client, base: base, cookie: session)

            let admin = try #require(try await Self.signIn(client, [("admin_token", Self.adminToken)]).session)
            let apps = try await Self.get(client, "/console/apps", cookie: admin)
            let adminCSRF = try #require(apps.csrf)
            let token = try await Self.post(
                client, "/console/apps/\(harness.scores.app.appKey)/token", cookie: admin,
                [("csrf", adminCSRF), ("token_name", "<b>ci</b>")])
            #expect(token.text.contains("id=\"new-secret-value\""))
            let secret = try #require(Self.secret(in: token.text))

            let page = try await Self.get(client, "\(base)/audit", cookie: session)
            #expect(page.status == .ok)
            #expect(page.text.contains("id=\"nav-audit\""))
            #expect(page.text.contains("push.accepted") && page.text.contains(pushID) && page.text.contains("Master secret"))
            #expect(page.text.contains("credential.changed") && page.text.contains("Admin token"))
            #expect(page.text.contains("&lt;b&gt;ci&lt;/b&gt;") && !page.text.contains("<b>ci</b>"))
            #expect(!page.text.contains(secret) && !page.text.contains(harness.scores.credentials.masterSecret))

            let byKind = try await Self.get(client, "\(base)/audit?kind=admin_token", cookie: session)
            #expect(byKind.text.contains("api_token_issued") && !byKind.text.contains(pushID))
            let byAction = try await Self.get(client, "\(base)/audit?action=push.accepted&since=2020-01-01T00:00", cookie: session)
            #expect(byAction.text.contains(pushID) && !byAction.text.contains("api_token_issued"))
            let bad = try await Self.get(client, "\(base)/audit?since=soon", cookie: session)
            #expect(bad.status == .badRequest && bad.text.contains("role=\"alert\""))
            #expect(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/audit", cookie: session).status == .notFound)
            #expect(try await Self.get(client, "/console/audit", cookie: session).status == .notFound)

            // The admin's page: every app's entries, with the app's name.
            let deployment = try await Self.get(client, "/console/audit", cookie: admin)
            #expect(deployment.status == .ok)
            #expect(deployment.text.contains("id=\"nav-deployment-audit\""))
            #expect(deployment.text.contains(pushID) && deployment.text.contains(harness.scores.app.name))
        }
    }

    /// The value the page shows once for a new secret.
    static func secret(in text: String) -> String? {
        guard let start = text.range(of: "id=\"new-secret-value\"") else { return nil }
        let rest = text[start.upperBound...]
        guard let open = rest.firstIndex(of: ">") else { return nil }
        return String(rest[rest.index(after: open)...].prefix { $0 != "<" })
    }
}
