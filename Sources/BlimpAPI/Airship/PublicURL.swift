import Hummingbird

/// Where clients reach this API: the configured public URL (`BLIMP_PUBLIC_URL`), or else `http://` and the request's
/// `Host`. Remote config hands it to the SDK, and paging links point at it. Never ends with `/`.
struct PublicURL: Sendable {
    let configured: String?

    init(_ configured: String?) {
        self.configured = configured.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }

    func base(for request: Request) -> String {
        self.configured ?? "http://\(request.head.authority ?? "localhost")"
    }
}
