import BlimpCore
import HTTPTypes
import Hummingbird

/// The API's rate limiters, by app (and client address): each app has its own buckets, so one app's traffic never
/// refuses another's.
struct RequestLimits: Sendable {
    let configuration: APILimits
    private let push: RateLimiter<Int64>
    private let server: RateLimiter<Int64>
    private let creations: RateLimiter<Int64>
    private let creationsByAddress: RateLimiter<AddressKey>

    struct AddressKey: Hashable, Sendable {
        var appID: Int64
        var address: String
    }

    /// Which of the master-secret APIs a request is for.
    enum ServerAPI {
        case push, other
    }

    init(_ configuration: APILimits) {
        self.configuration = configuration
        self.push = RateLimiter(configuration.pushRequests)
        self.server = RateLimiter(configuration.serverRequests)
        self.creations = RateLimiter(configuration.channelCreations)
        self.creationsByAddress = RateLimiter(configuration.channelCreationsPerAddress)
    }

    /// Admits a server or Push API request of the app, else 429 with `Retry-After`.
    func admit(_ api: ServerAPI, appID: Int64) throws {
        let limiter = api == .push ? self.push : self.server
        if let wait = limiter.admit(appID) {
            throw AirshipError.tooManyRequests(
                "over \(Int(limiter.limit.perSecond)) \(api == .push ? "Push API" : "server API") requests a second for this app",
                retryAfter: wait)
        }
    }

    /// Admits a channel creation of the app from the request's client, else 503 with `Retry-After`, which the SDK
    /// retries (a 4xx would make it give up).
    func admitChannelCreation(appID: Int64, request: Request, context: some RequestContext) throws {
        if let wait = self.creations.admit(appID) {
            throw AirshipError.unavailable("too many channels created for this app; try again later", retryAfter: wait)
        }
        let address = self.configuration.clientAddress(request, context)
        if let wait = self.creationsByAddress.admit(AddressKey(appID: appID, address: address)) {
            throw AirshipError.unavailable("too many channels created from this address; try again later", retryAfter: wait)
        }
    }
}
