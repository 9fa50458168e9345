/// A problem with the APNs client's own configuration, described without secrets.
public enum APNsClientError: Error, CustomStringConvertible {
    case invalidURL
    case unreadableCAFile(String)

    public var description: String {
        switch self {
        case .invalidURL: "the APNs base URL has no host"
        case .unreadableCAFile(let path): "the APNs CA file cannot be read: \(path)"
        }
    }
}
