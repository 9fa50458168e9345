import BlimpCore
import Foundation
import Testing

/// Retentions as written on the command line, in the console and in the environment: a whole number and a unit,
/// within the setting's floor and the ceiling, each refusal naming the setting and the rule.
@Suite struct RetentionPolicyTests {
    @Test(arguments: [("90s", 90), ("15m", 900), ("12h", 43_200), ("30d", 2_592_000), ("3650d", 315_360_000)])
    func aWholeNumberAndAUnitIsARetention(text: String, seconds: Int64) throws {
        #expect(try RetentionPolicy.parse(text, for: .audit) == .seconds(seconds))
    }

    @Test(arguments: [
        ("-1d", "is not a duration"), ("0s", "must be more than 0"), ("1e30s", "is not a duration"), ("1.5x", "is not a duration"),
        ("", "is not a duration"), ("abc", "is not a duration"), ("1.5h", "is not a duration"), ("30", "is not a duration"),
        ("3651d", "above the ceiling of 3650d"), ("999999999999d", "above the ceiling"), ("9999999999999d", "is not a duration"),
    ])
    func whatIsNotARetentionIsRefusedWithTheRule(text: String, rule: String) {
        #expect {
            try RetentionPolicy.parse(text, for: .audit)
        } throws: { error in
            "\(error)".contains(rule) && "\(error)".contains("audit retention")
        }
    }

    @Test func eachSettingHasItsFloor() throws {
        #expect(throws: InvalidRetention.self) { try RetentionPolicy.parse("23h", for: .pushes) }
        #expect(try RetentionPolicy.parse("24h", for: .pushes) == .seconds(86400))
        #expect(throws: InvalidRetention.self) { try RetentionPolicy.parse("59m", for: .outcomes) }
        #expect(try RetentionPolicy.parse("1h", for: .outcomes) == .seconds(3600))
        #expect(try RetentionPolicy.parse("1s", for: .audit) == .seconds(1))
        let refused = #expect(throws: InvalidRetention.self) { try RetentionPolicy.parse("2h", for: .pushes) }
        #expect(refused?.description == "the pushes retention '2h' is below the floor of 24h (idempotency keys answer for 24h)")
    }

    @Test func defaultsAndNamesAreTheDocumentedOnes() {
        let policy = RetentionPolicy()
        #expect(RetentionPolicy.format(policy.pushes) == "30d" && RetentionPolicy.format(policy.outcomes) == "7d")
        #expect(RetentionPolicy.format(policy.audit) == "365d")
        #expect(RetentionPolicy.Setting.allCases.map(\.environmentName) == [
            "BLIMP_RETENTION_PUSHES", "BLIMP_RETENTION_OUTCOMES", "BLIMP_RETENTION_AUDIT", "BLIMP_RETENTION_EVENTS",
        ])
        #expect(RetentionPolicy.format(.seconds(36 * 3600)) == "36h" && RetentionPolicy.format(.seconds(90)) == "90s")
    }

    @Test func anAppsOwnRetentionGivesItsOwnCutoff() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let policy = RetentionPolicy(pushes: .seconds(86400))
        let (deployment, apps) = policy.cutoffs(
            .pushes, apps: [1: AppRetention(pushes: .seconds(2 * 86400)), 2: AppRetention(audit: .seconds(60)), 3: AppRetention(pushes: .seconds(86400))],
            now: now)
        #expect(deployment == now.addingTimeInterval(-86400))
        #expect(apps == [1: now.addingTimeInterval(-2 * 86400)])
        #expect(policy.applying(AppRetention(outcomes: .seconds(7200))).outcomes == .seconds(7200))
    }
}
