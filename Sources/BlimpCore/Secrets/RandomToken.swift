import Foundation

/// Random, URL-safe identifiers and secrets in Airship's shape: 22 characters of `[A-Za-z0-9_-]`
/// (16 random bytes, base64url without padding). Airship's libraries check app keys and secrets against `^[\w-]{22}$`
/// (docs/references.md#airship-channels-and-named-users).
public enum RandomToken {
    /// The length of every generated key and secret.
    public static let length = 22

    /// A new token from the system's secure random source. It never starts with `-`, so that it can follow an option
    /// on a command line (`blimp push --app-key K`: one in 64 keys would otherwise read as a missing value).
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let token = Data(bytes).base64URLEncodedString()
            if token.utf8.first != UInt8(ascii: "-") { return token }
        }
    }

    /// Whether `value` has the shape of a generated token.
    public static func isWellFormed(_ value: String) -> Bool {
        value.utf8.count == length && value.utf8.allSatisfy(Base64URL.isAlphabetByte)
    }
}

extension Data {
    /// Base64url (RFC 4648 §5) without padding.
    public func base64URLEncodedString() -> String {
        let base64 = self.base64EncodedString().utf8.compactMap { byte -> UInt8? in
            switch byte {
            case UInt8(ascii: "+"): UInt8(ascii: "-")
            case UInt8(ascii: "/"): UInt8(ascii: "_")
            case UInt8(ascii: "="): nil
            default: byte
            }
        }
        return String(decoding: base64, as: UTF8.self)
    }
}

enum Base64URL {
    static func isAlphabetByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}

/// Bearer tokens for an app's server API: `blimp_` and 43 characters of base64url (256 random bits), a shape that
/// cannot be mistaken for the SDK's tokens.
public enum APIToken {
    public static let prefix = "blimp_"

    /// A new token from the system's secure random source.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Self.prefix + Data(bytes).base64URLEncodedString()
    }

    /// Whether `value` has the shape of an API token.
    public static func isWellFormed(_ value: String) -> Bool {
        value.hasPrefix(Self.prefix) && value.utf8.count == Self.prefix.utf8.count + 43
            && value.utf8.dropFirst(Self.prefix.utf8.count).allSatisfy(Base64URL.isAlphabetByte)
    }
}
