import Foundation
import Hummingbird

/// The fields of an `application/x-www-form-urlencoded` body or query string.
struct FormFields: Sendable {
    private var values: [String: String] = [:]

    /// The largest form body the console reads (an APNs key and a content state fit many times over).
    static let maximumBody = 256 * 1024

    /// The fields of `encoded`; a NUL character, which no field may hold (PostgreSQL's text cannot), is refused.
    init(encoded: Substring) throws {
        for pair in encoded.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), self.values[name] == nil else { continue }
            let value = parts.count > 1 ? Self.decode(parts[1]) ?? "" : ""
            guard !name.contains("\0"), !value.contains("\0") else {
                throw ConsoleError.badRequest("A field holds a NUL character, which no field may.")
            }
            self.values[name] = value
        }
    }

    /// The request's form body.
    init(body request: Request) async throws {
        guard let buffer = try? await request.body.collect(upTo: Self.maximumBody) else {
            throw ConsoleError.badRequest("The form is larger than \(Self.maximumBody / 1024) KB.")
        }
        try self.init(encoded: Substring(String(buffer: buffer)))
    }

    /// The request's query string.
    init(query request: Request) throws {
        try self.init(encoded: Substring(request.uri.query ?? ""))
    }

    /// The field's value, with surrounding white space trimmed; `nil` when absent or empty.
    subscript(_ name: String) -> String? {
        guard let value = self.values[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// The fields whose names start with `prefix`, trimmed, without the empty ones.
    func fields(prefixed prefix: String) -> [String: String] {
        var fields: [String: String] = [:]
        for name in self.values.keys where name.hasPrefix(prefix) { fields[name] = self[name] }
        return fields
    }

    /// The field exactly as sent (a JSON text or a PEM key keeps its lines).
    func raw(_ name: String) -> String? { self.values[name] }

    private static func decode(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
