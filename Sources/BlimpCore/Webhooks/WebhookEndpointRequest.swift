import Foundation

/// The body of `POST /api/webhooks`: where to deliver (`url`) and which event types (`types`; absent: every type).
/// Anything else is a 400 naming the field.
public struct WebhookEndpointRequest: Sendable, Equatable {
    public var url: URL
    /// The types delivered; `nil` for every type.
    public var types: Set<EventType>?

    /// The longest URL taken.
    public static let maximumURLLength = 2048

    /// Reads the body. `url` must be absolute `https` (or `http` where the deployment allows private endpoints, as
    /// tests do), name a host, and carry no user name or password.
    public init(parsing body: RawJSON, allowsPlainHTTP: Bool) throws(InvalidField) {
        let reader = try JSONObjectReader(body, at: "", allowed: ["url", "types"])
        let text = try reader.required("url") { key throws(InvalidField) in try reader.string(key, maximumLength: Self.maximumURLLength) }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw InvalidField("url", "must be an absolute URL, like https://example.com/hooks")
        }
        guard scheme == "https" || (scheme == "http" && allowsPlainHTTP) else { throw InvalidField("url", "must be https") }
        guard url.user == nil, url.password == nil else { throw InvalidField("url", "must not carry a user name or password") }
        self.url = url
        if let names = try reader.strings("types") {
            var types = Set<EventType>()
            for (index, name) in names.enumerated() {
                guard let type = EventType(rawValue: name.uppercased()) else { throw InvalidField("types[\(index)]", "is not an event type") }
                types.insert(type)
            }
            guard !types.isEmpty else { throw InvalidField("types", "must name at least one event type, or be left out for every type") }
            self.types = types
        }
    }
}
