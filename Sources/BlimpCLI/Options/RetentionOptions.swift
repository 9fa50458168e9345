import ArgumentParser
import BlimpCore
import Foundation

/// How long the deployment keeps what grows with traffic (``RetentionPolicy``; apps may override each with `blimp apps
/// retention`) and how often the janitor deletes what is past it: each a flag with an environment variable as its
/// default.
struct RetentionOptions: ParsableArguments {
    @Option(help: "How long finished pushes and their reports are kept, from when they finished: 90s, 15m, 12h or 30d; at least 24h. Env BLIMP_RETENTION_PUSHES.")
    var retentionPushes = RetentionOptions.environment(.pushes)
    @Option(help: "How long delivery outcomes and send tallies are kept; at least 1h. Env BLIMP_RETENTION_OUTCOMES.")
    var retentionOutcomes = RetentionOptions.environment(.outcomes)
    @Option(help: "How long audit entries are kept. Env BLIMP_RETENTION_AUDIT.")
    var retentionAudit = RetentionOptions.environment(.audit)
    @Option(help: "How long the event stream's events are kept; at least 24h. Env BLIMP_RETENTION_EVENTS.")
    var retentionEvents = RetentionOptions.environment(.events)
    @Option(help: "Seconds between the janitor's rounds; a round may spend a third of it. Env BLIMP_JANITOR_SECONDS.")
    var janitorSeconds: Double = ProcessInfo.processInfo.environment["BLIMP_JANITOR_SECONDS"].flatMap(Double.init) ?? 60

    func validate() throws {
        _ = try self.policy()
        guard self.janitorSeconds >= 1, self.janitorSeconds <= 86400 else { throw ValidationError("--janitor-seconds is 1 to 86400") }
    }

    /// The deployment's retentions; a value refused names its flag, its variable and the rule.
    func policy() throws -> RetentionPolicy {
        var policy = RetentionPolicy()
        let given = [
            (RetentionPolicy.Setting.pushes, self.retentionPushes), (.outcomes, self.retentionOutcomes), (.audit, self.retentionAudit),
            (.events, self.retentionEvents),
        ]
        for (setting, text) in given {
            do {
                policy[setting] = try RetentionPolicy.parse(text, for: setting)
            } catch {
                throw ValidationError("--retention-\(setting.rawValue) (\(setting.environmentName)): \(error)")
            }
        }
        return policy
    }

    /// The time between the janitor's rounds.
    var janitorInterval: Duration { .milliseconds(Int64(self.janitorSeconds * 1000)) }

    private static func environment(_ setting: RetentionPolicy.Setting) -> String {
        ProcessInfo.processInfo.environment[setting.environmentName] ?? RetentionPolicy.format(setting.defaultDuration)
    }
}
