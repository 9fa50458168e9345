import Foundation

/// Path segments from text devices chose (Live Activity names).
enum Paths {
    /// The text of a percent-encoded segment; `nil` when it is empty, not valid percent-encoding, or holds a NUL
    /// (which no stored name can).
    static func decode(_ segment: String) -> String? {
        guard let text = segment.removingPercentEncoding, !text.isEmpty, !text.contains("\0") else { return nil }
        return text
    }

    /// `name` percent-encoded to be one path segment.
    static func encode(_ name: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#%;")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// `value` percent-encoded to be a query parameter's value (a next page's link keeps the filters it was given).
    static func queryValue(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~:")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
