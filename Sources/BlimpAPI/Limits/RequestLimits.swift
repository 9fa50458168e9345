import BlimpCore
import BlimpStore
import HTTPTypes
import Hummingbird

/// The API's rate limits, by app (and client address), each holding for the whole deployment (see
/// ``SharedRateLimiter``): each app has its own buckets, so one app's traffic never refuses another's.
struct RequestLimits: Sendable {
    let configuration: APILimits
    private let push: SharedRateLimiter
    private let server: SharedRateLimiter
    private let creations: SharedRateLimiter
    private let creationsByAddress: SharedRateLimiter

    /// Which of the master-secret APIs a request is for.
    enum ServerAPI {
        case push, other
    }

    init(_ configuration: APILimits, buckets: RateBuckets) {
        self.configuration = configuration
        self.push = SharedRateLimiter("push", limit: configuration.pushRequests, buckets: buckets)
        self.server = SharedRateLimiter("server", limit: configuration.serverRequests, buckets: buckets)
        self.creations = SharedRateLimiter("channel_creation", limit: configuration.channelCreations, buckets: buckets)
        self.creationsByAddress = SharedRateLimiter(
            "channel_creation_per_address", limit: configuration.channelCreationsPerAddress, buckets: buckets)
    }

    /// Admits a server or Push API request of the app, else 429 with `Retry-After`.
    func admit(_ api: ServerAPI, appID: Int64) async throws {
        let limiter = api == .push ? self.push : self.server
        if let wait = await limiter.admit("\(appID)") {
            throw AirshipError.tooManyRequests(
                "over \(Int(limiter.limit.perSecond)) \(api == .push ? "Push API" : "server API") requests a second for this app",
                retryAfter: wait)
        }
    }

    /// Admits a channel creation of the app from the request's client, else 503 with `Retry-After`, which the SDK
    /// retries (a 4xx would make it give up). The address's bucket is only reached through the app's, so a flood of
    /// addresses adds rows to `rate_buckets` no faster than the app's limit.
    func admitChannelCreation(appID: Int64, request: Request, context: some RequestContext) async throws {
        if let wait = await self.creations.admit("\(appID)") {
            throw AirshipError.unavailable("too many channels created for this app; try again later", retryAfter: wait)
        }
        let address = self.configuration.clientAddress(request, context)
        if let wait = await self.creationsByAddress.admit("\(appID) \(address)") {
            throw AirshipError.unavailable("too many channels created from this address; try again later", retryAfter: wait)
        }
    }
}
