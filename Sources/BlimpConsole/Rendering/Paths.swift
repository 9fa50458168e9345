import Foundation

/// Path segments from text devices chose (Live Activity names).
enum Paths {
    /// `name` percent-encoded to be one path segment.
    static func encode(_ name: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%;")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
