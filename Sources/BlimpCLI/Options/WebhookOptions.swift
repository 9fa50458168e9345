import ArgumentParser
import BlimpCore
import BlimpDispatch
import Foundation

/// How webhooks are delivered: the retry schedule (a flag with an environment variable as its default), and whether
/// endpoints may be private (`BLIMP_WEBHOOKS_ALLOW_PRIVATE`, read by the API and the workers alike).
struct WebhookOptions: ParsableArguments {
    @Option(help: "The delays before each retry of a failed webhook delivery, the last repeating: 5s,20s,50s. Env BLIMP_WEBHOOK_RETRY_DELAYS.")
    var webhookRetryDelays = ProcessInfo.processInfo.environment["BLIMP_WEBHOOK_RETRY_DELAYS"] ?? "5s,20s,50s"

    func validate() throws {
        _ = try self.sender()
    }

    /// `BLIMP_WEBHOOKS_ALLOW_PRIVATE` set to `1`, `true` or `yes`: endpoints may be plain `http` and resolve to private,
    /// loopback or link-local addresses. For tests and closed networks only: an app could then reach the deployment's own.
    static var allowsPrivate: Bool {
        ["1", "true", "yes"].contains(ProcessInfo.processInfo.environment["BLIMP_WEBHOOKS_ALLOW_PRIVATE"]?.lowercased() ?? "")
    }

    /// The workers' sender configuration.
    func sender() throws -> WebhookSender.Configuration {
        guard let retries = WebhookRetrySchedule(parsing: self.webhookRetryDelays) else {
            throw ValidationError("--webhook-retry-delays (BLIMP_WEBHOOK_RETRY_DELAYS): write durations like 5s,5m,30m, separated by commas")
        }
        var configuration = WebhookSender.Configuration()
        configuration.retries = retries
        configuration.allowsPrivateAddresses = Self.allowsPrivate
        return configuration
    }
}
