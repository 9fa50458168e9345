import BlimpTestSupport
import Foundation
import Testing

/// deploy/alerts.yml: promtool accepts the rules, and its unit tests (Deploy/alerts_test.yml) see each alert fire on
/// the series it is for and every alert stay quiet on a healthy deployment; docs/operations.md names every alert.
@Suite struct AlertRulesTests {
    static let rules = ConsoleBrowserTests.packageRoot.appendingPathComponent("deploy/alerts.yml")

    @Test func promtoolChecksAndTestsTheRules() async throws {
        let check = try await ChildProcess.run("/usr/bin/promtool", ["check", "rules", Self.rules.path])
        #expect(check.status == 0, "\(check.output)")
        let tests = ConsoleBrowserTests.packageRoot.appendingPathComponent("Tests/BlimpCLITests/Deploy/alerts_test.yml")
        let run = try await ChildProcess.run("/usr/bin/promtool", ["test", "rules", tests.path])
        #expect(run.status == 0 && run.output.contains("SUCCESS"), "\(run.output)")
    }

    @Test func operationsNamesEveryAlert() throws {
        let alerts = try String(contentsOf: Self.rules, encoding: .utf8).matches(of: /- alert: (\w+)/).map { String($0.1) }
        let operations = try String(contentsOf: ConsoleBrowserTests.packageRoot.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        #expect(alerts.count == 11)
        #expect(alerts.filter { !operations.contains("`\($0)`") } == [])
    }
}
