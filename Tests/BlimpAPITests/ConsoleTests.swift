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

/// The console's gate, in-process against a real PostgreSQL: sign-in, cookies, CSRF, scoping to the session's app,
/// escaping of what devices sent, and the compose form refusing what the API refuses. (The pages in a real browser:
/// ConsoleBrowserTests.)
@Suite(.enabled(if: TestDatabase.isEnabled)) struct ConsoleTests {
    static let adminToken = "admin-token-for-tests-0123456789"

    /// A page's text, status and headers.
    struct Page {
        let status: HTTPResponse.Status
        let text: String
        let headers: HTTPFields

        /// The value of the first hidden `csrf` field.
        var csrf: String? { self.field("csrf") }

        func field(_ name: String) -> String? {
            guard let range = self.text.range(of: "name=\"\(name)\" value=\"") else { return nil }
            return String(self.text[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    static func get(_ client: any TestClientProtocol, _ uri: String, cookie: String?) async throws -> Page {
        try await client.execute(uri: uri, method: .get, headers: Self.headers(cookie: cookie, form: false)) {
            Page(status: $0.status, text: String(buffer: $0.body), headers: $0.headers)
        }
    }

    static func post(_ client: any TestClientProtocol, _ uri: String, cookie: String?, _ fields: [(String, String)]) async throws -> Page {
        let body = fields.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        return try await client.execute(uri: uri, method: .post, headers: Self.headers(cookie: cookie, form: true), body: ByteBuffer(string: body)) {
            Page(status: $0.status, text: String(buffer: $0.body), headers: $0.headers)
        }
    }

    static func headers(cookie: String?, form: Bool) -> HTTPFields {
        var headers = HTTPFields()
        if let cookie { headers[.cookie] = cookie }
        if form { headers[.contentType] = "application/x-www-form-urlencoded" }
        return headers
    }

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// `name=value` of a `Set-Cookie` header naming `name`.
    static func cookie(_ name: String, in headers: HTTPFields) -> String? {
        headers[values: .setCookie].first { $0.hasPrefix("\(name)=") }.map { String($0.prefix { $0 != ";" }) }
    }

    /// Signs in with `fields` and returns the answer, and the session cookie when one was set.
    static func signIn(_ client: any TestClientProtocol, _ fields: [(String, String)]) async throws -> (page: Page, session: String?) {
        let form = try await Self.get(client, "/console/login", cookie: nil)
        let login = try #require(Self.cookie("blimp_login", in: form.headers))
        let page = try await Self.post(client, "/console/login", cookie: login, fields + [("csrf", try #require(form.csrf))])
        return (page, Self.cookie("blimp_session", in: page.headers))
    }

    /// Sends an update of `match` from the compose page; returns its push id.
    static func composeAndSend(_ client: any TestClientProtocol, base: String, cookie: String) async throws -> String {
        let csrf = try #require(try await Self.get(client, "\(base)/compose", cookie: cookie).csrf)
        let sent = try await Self.post(
            client, "\(base)/compose", cookie: cookie,
            [("csrf", csrf), ("event", "update"), ("name", "match"), ("content_state", #"{"home": 1}"#), ("action", "send")])
        #expect(sent.status == .seeOther)
        return try #require(sent.headers[.location]?.split(separator: "/").last.map(String.init))
    }

    static func signIn(_ client: any TestClientProtocol, _ app: (app: App, credentials: AppCredentials)) async throws -> String {
        let answer = try await Self.signIn(client, [("app_key", app.app.appKey), ("master_secret", app.credentials.masterSecret)])
        #expect(answer.page.status == .seeOther)
        return try #require(answer.session)
    }

    @Test func signingInScopesEveryPageToTheApp() async throws {
        try await APIHarness.run { harness, client in
            let wrong = try await Self.signIn(client, [("app_key", harness.scores.app.appKey), ("master_secret", harness.scores.credentials.appSecret)])
            #expect(wrong.page.status == .unauthorized)
            #expect(wrong.page.text.contains("id=\"login-error\""))
            #expect(wrong.session == nil)

            let answer = try await Self.signIn(client, [("app_key", harness.scores.app.appKey), ("master_secret", harness.scores.credentials.masterSecret)])
            #expect(answer.page.headers[.location] == "/console/app/\(harness.scores.app.appKey)")
            let setCookie = try #require(answer.page.headers[values: .setCookie].first { $0.hasPrefix("blimp_session=") })
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Secure"))
            let session = try #require(answer.session)

            let home = try await Self.get(client, "/console", cookie: session)
            #expect(home.headers[.location] == "/console/app/\(harness.scores.app.appKey)")
            let scores = "/console/app/\(harness.scores.app.appKey)"
            for page in ["", "/channels", "/activities", "/pushes", "/schedules", "/compose"] {
                let shown = try await Self.get(client, scores + page, cookie: session)
                #expect(shown.status == .ok, "\(page)")
                #expect(shown.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
            }
            let other = try await ServerAPITests.register(client, harness.orders)
            #expect(try await Self.get(client, "\(scores)/channels/\(other)", cookie: session).status == .notFound)
            #expect(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)", cookie: session).status == .notFound)
            #expect(try await Self.get(client, "/console/apps", cookie: session).status == .notFound)
            #expect(try await Self.get(client, scores, cookie: nil).headers[.location] == "/console/login")
        }
    }

    @Test func formsWithoutTheSessionsTokenAreRefusedAndSigningOutEndsTheSession() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let compose = "/console/app/\(harness.scores.app.appKey)/compose"
            let fields = [("event", "update"), ("name", "match"), ("action", "send")]
            #expect(try await Self.post(client, compose, cookie: session, fields).status == .forbidden)
            #expect(try await Self.post(client, compose, cookie: session, fields + [("csrf", "not-the-token")]).status == .forbidden)
            let csrf = try #require(try await Self.get(client, compose, cookie: session).csrf)
            #expect(try await Self.post(client, "/console/logout", cookie: session, [("csrf", csrf)]).headers[.location] == "/console/login")
            #expect(try await Self.get(client, compose, cookie: session).headers[.location] == "/console/login")
        }
    }

    /// A sign-in page shown again to the same browser (another tab, the back button) keeps the browser's token, so the
    /// form already on screen still signs in; a token of another shape is replaced.
    @Test func aSignInPageShownAgainKeepsTheFormOnScreenValid() async throws {
        try await APIHarness.run { harness, client in
            let form = try await Self.get(client, "/console/login", cookie: nil)
            let login = try #require(Self.cookie("blimp_login", in: form.headers))
            let again = try await Self.get(client, "/console/login", cookie: login)
            #expect(again.csrf == form.csrf)
            let fields = [("app_key", harness.scores.app.appKey), ("master_secret", harness.scores.credentials.masterSecret)]
            let page = try await Self.post(client, "/console/login", cookie: login, fields + [("csrf", try #require(form.csrf))])
            #expect(page.status == .seeOther && Self.cookie("blimp_session", in: page.headers) != nil)
            let planted = try await Self.get(client, "/console/login", cookie: "blimp_login=short")
            #expect(planted.csrf != "short" && planted.csrf?.utf8.count == RandomToken.length)
        }
    }

    /// A push page's poll whose session has ended is told 401, not sent to the sign-in page: the sign-in page, fetched
    /// in the background, would set the browser a new sign-in token while the page being signed out to shows the first.
    @Test func aScriptAskingWithoutASessionIsToldToSignInWithoutASignInToken() async throws {
        try await APIHarness.run { harness, client in
            let live = "/console/app/\(harness.scores.app.appKey)/pushes/\(UUID())/live"
            var headers = Self.headers(cookie: nil, form: false)
            headers[.accept] = "application/json"
            let answer = try await client.execute(uri: live, method: .get, headers: headers) {
                Page(status: $0.status, text: String(buffer: $0.body), headers: $0.headers)
            }
            #expect(answer.status == .unauthorized)
            #expect(answer.headers[.contentType] == "application/json")
            #expect(answer.text.contains("\"ok\":false"))
            #expect(answer.headers[.location] == nil && Self.cookie("blimp_login", in: answer.headers) == nil)
            #expect(try await Self.get(client, live, cookie: nil).headers[.location] == "/console/login")
        }
    }

    @Test func whatDevicesSentIsShownAsText() async throws {
        try await APIHarness.run { harness, client in
            let id = try await ServerAPITests.register(client, harness.scores)
            let tags = #"{"audience": {"channel": "\#(id)"}, "add": {"device": ["<script>alert(1)</script>"]}}"#
            #expect(try await client.send(.post, "/api/channels/tags", harness.master(), tags).status == .ok)
            let session = try await Self.signIn(client, harness.scores)
            let page = try await Self.get(client, "/console/app/\(harness.scores.app.appKey)/channels/\(id)", cookie: session)
            #expect(page.status == .ok)
            #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!page.text.contains("<script>alert"))
            let found = try await Self.get(
                client, "/console/app/\(harness.scores.app.appKey)/channels?by=tag&group=device&q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", cookie: session)
            #expect(found.text.contains("/channels/\(id)"))
        }
    }

    /// The channel page shows each activity's state (one awaiting its token, without a token) and when each
    /// push-to-start token was last reported; the name's page counts its activities by state and lists its channels.
    @Test func activitiesShowTheirStateAndStartTokensWhenLastReported() async throws {
        try await APIHarness.run { harness, client in
            let id = try await ServerAPITests.register(client, harness.scores)
            let ms = Int64(harness.clock.now.timeIntervalSince1970 * 1000)
            let batch = """
                {"live_activities": [{"action": "set", "type": "start_token", "attributes_type": "MatchAttributes",
                  "token": "\(String(repeating: "cd", count: 32))", "action_ts_ms": \(ms)}]}
                """
            let appSecret = APIHarness.basic(harness.scores.app.appKey, harness.scores.credentials.appSecret)
            #expect(try await client.send(.put, "/api/channels/sdk/batch/\(id)?platform=ios", appSecret, batch).status == .ok)
            try await harness.database.query(
                """
                INSERT INTO awaiting_activities (app_id, channel_id, name, start_push_id, sent_at)
                VALUES (\(harness.scores.app.id), \(UUID(uuidString: id)!), 'final', \(UUID()), \(harness.clock.now))
                """, logger: TestDatabase.logger)
            harness.clock.advance(by: 7200)
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let channel = try await Self.get(client, "\(base)/channels/\(id)", cookie: session)
            #expect(channel.status == .ok)
            #expect(channel.text.contains(#"<span class="state state-awaiting_token">awaiting_token</span>"#))
            #expect(channel.text.contains("Last reported by the device"))
            #expect(channel.text.contains("2 h 0 min ago"))
            let name = try await Self.get(client, "\(base)/activities/final", cookie: session)
            #expect(name.status == .ok)
            #expect(name.text.contains(#"id="activity-channels""#))
            #expect(name.text.contains("/channels/\(id)"))
            #expect(name.text.contains(#"<h2 class="state state-awaiting_token">awaiting_token</h2><p class="big">1</p>"#))
        }
    }

    /// Hostile values in queries, forms and paths get a 4xx page, and the console goes on serving.
    @Test func hostileInputIsRefusedWithAClientError() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let base = "/console/app/\(harness.scores.app.appKey)"
            let csrf = try #require(try await Self.get(client, "\(base)/compose", cookie: session).csrf)
            for uri in [
                "\(base)/channels?by=tag&group=device&q=a%00b", "\(base)/channels?by=named_user&q=%00",
                "\(base)/channels?by=tag&group=%00&q=x", "\(base)/activities?after=%00", "\(base)/activities/a%00b",
                "\(base)/activities/%ZZ", "\(base)/channels?by=token&q=\(String(repeating: "a", count: 201))",
                "\(base)/channels?by=channel&q=1e-20000", "\(base)/pushes/-1", "\(base)/schedules?start=%00", "\(base)/channels/\(String(repeating: "f", count: 5000))",
            ] {
                let page = try await Self.get(client, uri, cookie: session)
                #expect((400..<500).contains(page.status.code), "\(uri): \(page.status)")
            }
            let nul = try await Self.post(
                client, "\(base)/compose", cookie: session, [("csrf", csrf), ("event", "update"), ("name", "a\u{0}b"), ("action", "preview")])
            #expect(nul.status == .badRequest)
            let huge = try await Self.post(
                client, "\(base)/compose", cookie: session, [("csrf", csrf), ("content_state", String(repeating: "x", count: 300_000))])
            #expect(huge.status == .badRequest)
            #expect(try await Self.get(client, "\(base)/channels", cookie: session).status == .ok)
        }
    }

    @Test func composeRefusesWhatTheAPIRefusesNextToTheField() async throws {
        try await APIHarness.run { harness, client in
            let session = try await Self.signIn(client, harness.scores)
            let compose = "/console/app/\(harness.scores.app.appKey)/compose"
            let csrf = try #require(try await Self.get(client, compose, cookie: session).csrf)
            let notAnObject = try await Self.post(
                client, compose, cookie: session,
                [("csrf", csrf), ("event", "update"), ("name", "match"), ("content_state", "[1]"), ("action", "preview")])
            #expect(notAnObject.status == .badRequest)
            #expect(notAnObject.text.contains("id=\"error-content_state\""))
            let badChannel = try await Self.post(
                client, compose, cookie: session,
                [("csrf", csrf), ("event", "update"), ("name", "match"), ("aud_kind_0", "channel"), ("aud_value_0", "nope"), ("action", "preview")])
            #expect(badChannel.text.contains("id=\"error-audience\""))
            let preview = try await Self.post(
                client, compose, cookie: session,
                [("csrf", csrf), ("event", "update"), ("name", "match"), ("content_state", #"{"home": 2}"#), ("action", "preview")])
            #expect(preview.status == .ok)
            #expect(preview.text.contains("id=\"apns-payload\""))
            #expect(preview.text.contains("&quot;content-state&quot;:{&quot;home&quot;:2}"))
            #expect(preview.text.contains("<span id=\"audience-count\">0</span>"))
            #expect(preview.text.contains("<label for=\"not_value_2\">") && preview.text.contains("id=\"aud_kind_4\" name=\"aud_kind_4\""))
        }
    }

    /// Ten failed sign-ins in a burst, then one every 10 s (the default limit): on a loaded machine the attempts
    /// themselves take seconds, so the limit is checked against the time they took, not a fixed count.
    @Test func failedSignInsAreLimitedPerAddress() async throws {
        try await APIHarness.run { harness, client in
            var statuses: [HTTPResponse.Status] = []
            let start = ContinuousClock.now
            while statuses.last != .tooManyRequests, statuses.count < 60 {
                statuses.append(try await Self.signIn(client, [("app_key", harness.scores.app.appKey), ("master_secret", "wrong")]).page.status)
            }
            let refilled = Int((start.duration(to: .now).seconds * 0.1).rounded(.up))
            #expect(statuses.last == .tooManyRequests)
            #expect(statuses.dropLast().allSatisfy { $0 == .unauthorized })
            #expect((10...10 + refilled).contains(statuses.count - 1), "\(statuses.count - 1) failures before the limit, \(refilled) refilled")
            // Each failure the limit let through is on record; the one it refused is not (a flood would write without bound).
            let failed = try await AuditLog(client: harness.database, logger: TestDatabase.logger)
                .list(.deployment, filter: AuditFilter(action: .signInFailed), limit: 100)
            #expect(failed.records.count == statuses.count - 1)
        }
    }

    @Test func theAdminSeesEveryAppAndAnAppSeesOnlyItself() async throws {
        try await APIHarness.run(adminToken: Self.adminToken) { harness, client in
            let wrong = try await Self.signIn(client, [("admin_token", "not-it")])
            #expect(wrong.page.status == .unauthorized)
            let admin = try #require(try await Self.signIn(client, [("admin_token", Self.adminToken)]).session)
            let apps = try await Self.get(client, "/console/apps", cookie: admin)
            #expect(apps.status == .ok)
            #expect(apps.text.contains(harness.scores.app.appKey) && apps.text.contains(harness.orders.app.appKey))
            #expect(try await Self.get(client, "/console/app/\(harness.orders.app.appKey)/channels", cookie: admin).status == .ok)
            let token = try await Self.post(
                client, "/console/apps/\(harness.orders.app.appKey)/token", cookie: admin, [("csrf", try #require(apps.csrf)), ("token_name", "ci")])
            #expect(token.text.contains("id=\"new-secret-value\""))

            // Rotating an app's master secret ends the sessions signed in with it.
            let scores = try await Self.signIn(client, harness.scores)
            let overview = "/console/app/\(harness.scores.app.appKey)"
            #expect(try await Self.get(client, overview, cookie: scores).status == .ok)
            let rotated = try await Self.post(
                client, "/console/apps/\(harness.scores.app.appKey)/master", cookie: admin, [("csrf", try #require(apps.csrf))])
            #expect(rotated.text.contains("id=\"new-secret-value\""))
            #expect(try await Self.get(client, overview, cookie: scores).headers[.location] == "/console/login")
        }
    }
}
