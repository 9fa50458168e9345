import BlimpCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What one caller may make the API do, and how long the API waits: rate limits per app (and per client address for
/// channel creation), each holding for the whole deployment however many replicas serve it (`RequestLimits`), and
/// timeouts for slow clients and a slow or absent database.
public struct APILimits: Sendable {
    /// `POST /api/push` and `/validate`, per app. Over it: 429 with `Retry-After`. Default 100 a second, bursts of 200.
    public var pushRequests = RateLimit(perSecond: 100)
    /// The rest of the server API (channels, named users, reports), per app. Default 500 a second, bursts of 1,000.
    public var serverRequests = RateLimit(perSecond: 500)
    /// Channel creations (`POST /api/channels`) per app. Over it: 503 with `Retry-After`, which the SDK retries.
    /// Default 10,000 a second.
    public var channelCreations = RateLimit(perSecond: 10_000)
    /// Channel creations per app from one client address. Default 50 a second, bursts of 500.
    public var channelCreationsPerAddress = RateLimit(perSecond: 50, burst: 500)
    /// The header a trusted reverse proxy sets to the client's address (e.g. `X-Forwarded-For`, whose last entry is
    /// read: the one the proxy appended). `nil`: the connection's peer address.
    public var clientAddressHeader: HTTPField.Name?
    /// The longest a request may take, reading its body and waiting for the database included; then 503. Default 15 s.
    public var requestTimeout: Duration = .seconds(15)
    /// How long a connection may sit idle, or take to send a request's head, before it is closed. Default 60 s.
    public var idleTimeout: Duration = .seconds(60)

    public init() {}

    /// The client's address: the trusted proxy's header's last entry when one is configured, else the peer's.
    public func clientAddress(_ request: Request, _ context: some RequestContext) -> String {
        if let header = self.clientAddressHeader {
            guard let value = request.headers[header], let last = value.split(separator: ",").last else { return "unknown" }
            return last.trimmingCharacters(in: .whitespaces)
        }
        return (context as? any RemoteAddressRequestContext)?.remoteAddress?.ipAddress ?? "unknown"
    }
}
