import ArgumentParser
import BlimpAPI
import BlimpCore
import Foundation
import HTTPTypes

/// The API's rate limits and timeouts (``APILimits``), each a flag with an environment variable as its default.
struct LimitOptions: ParsableArguments {
    @Option(help: "Push API requests per app per second, bursts of twice that (0: no limit). Env BLIMP_PUSH_RATE_LIMIT.")
    var pushRateLimit: Double = LimitOptions.environment("BLIMP_PUSH_RATE_LIMIT", APILimits().pushRequests.perSecond)
    @Option(help: "Other server API requests per app per second (0: no limit). Env BLIMP_SERVER_RATE_LIMIT.")
    var serverRateLimit: Double = LimitOptions.environment("BLIMP_SERVER_RATE_LIMIT", APILimits().serverRequests.perSecond)
    @Option(help: "Channel creations per app per second (0: no limit). Env BLIMP_CHANNEL_CREATION_RATE_LIMIT.")
    var channelCreationRateLimit: Double =
        LimitOptions.environment("BLIMP_CHANNEL_CREATION_RATE_LIMIT", APILimits().channelCreations.perSecond)
    @Option(
        help: """
            Channel creations per app per client address per second, bursts of ten times that (0: no limit). \
            Env BLIMP_CHANNEL_CREATION_RATE_LIMIT_PER_ADDRESS.
            """
    )
    var channelCreationRateLimitPerAddress: Double =
        LimitOptions.environment("BLIMP_CHANNEL_CREATION_RATE_LIMIT_PER_ADDRESS", APILimits().channelCreationsPerAddress.perSecond)
    @Option(
        help: """
            The header a trusted reverse proxy sets to the client's address (its last entry is read), e.g. \
            X-Forwarded-For; empty: the connection's peer. Only set it behind such a proxy. Env BLIMP_CLIENT_ADDRESS_HEADER.
            """
    )
    var clientAddressHeader: String = ProcessInfo.processInfo.environment["BLIMP_CLIENT_ADDRESS_HEADER"] ?? ""
    @Option(help: "Seconds a request may take, body and database included, before a 503. Env BLIMP_REQUEST_TIMEOUT.")
    var requestTimeout: Double = LimitOptions.environment("BLIMP_REQUEST_TIMEOUT", 15)
    @Option(help: "Seconds a connection may idle, or take to send a request head, before it is closed. Env BLIMP_IDLE_TIMEOUT.")
    var idleTimeout: Double = LimitOptions.environment("BLIMP_IDLE_TIMEOUT", 60)

    func validate() throws {
        for (name, value) in [
            ("--push-rate-limit", self.pushRateLimit), ("--server-rate-limit", self.serverRateLimit),
            ("--channel-creation-rate-limit", self.channelCreationRateLimit),
            ("--channel-creation-rate-limit-per-address", self.channelCreationRateLimitPerAddress),
        ] where !(value >= 0) {
            throw ValidationError("\(name) is a rate, 0 or more")
        }
        guard self.requestTimeout > 0, self.idleTimeout > 0 else { throw ValidationError("timeouts are more than 0 seconds") }
        guard self.clientAddressHeader.isEmpty || HTTPField.Name(self.clientAddressHeader) != nil else {
            throw ValidationError("--client-address-header is not a header name")
        }
    }

    /// The limits these options give.
    var limits: APILimits {
        var limits = APILimits()
        limits.pushRequests = RateLimit(perSecond: self.pushRateLimit)
        limits.serverRequests = RateLimit(perSecond: self.serverRateLimit)
        limits.channelCreations = RateLimit(perSecond: self.channelCreationRateLimit)
        limits.channelCreationsPerAddress = RateLimit(perSecond: self.channelCreationRateLimitPerAddress, burst: max(self.channelCreationRateLimitPerAddress * 10, 1))
        limits.clientAddressHeader = HTTPField.Name(self.clientAddressHeader)
        limits.requestTimeout = .milliseconds(Int64(self.requestTimeout * 1000))
        limits.idleTimeout = .milliseconds(Int64(self.idleTimeout * 1000))
        return limits
    }

    private static func environment(_ name: String, _ fallback: Double) -> Double {
        ProcessInfo.processInfo.environment[name].flatMap(Double.init) ?? fallback
    }
}
