/// What an account's email and password must be; a refusal says which rule, never the password.
public enum AccountRuleError: Error, Equatable, CustomStringConvertible {
    case malformedEmail
    case passwordLength
    case unknownRole(String)

    public var description: String {
        switch self {
        case .malformedEmail: "an email is an address like name@example.com, at most \(EmailAddress.maximumLength) bytes"
        case .passwordLength: "a password is \(Password.minimumLength) to \(Password.maximumLength) bytes"
        case .unknownRole: "a role is viewer, sender or admin"
        }
    }
}

/// A person's email, lower-cased: what an account is known by and signs in with.
public struct EmailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The longest address accepted (RFC 5321's path limit).
    public static let maximumLength = 254

    /// The address, lower-cased.
    public let value: String

    /// Reads `text` (trimmed of surrounding spaces), or throws ``AccountRuleError/malformedEmail``: one `@`, a local
    /// part and a domain with a dot, no spaces or control characters.
    public init(_ text: String) throws(AccountRuleError) {
        let value = text.trimmingSpaces.lowercased()
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard value.utf8.count <= Self.maximumLength, parts.count == 2, !parts[0].isEmpty,
            parts[1].split(separator: ".", omittingEmptySubsequences: false).count >= 2,
            !parts[1].split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty),
            value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !"<>()[],;:\\\"".unicodeScalars.contains($0) })
        else { throw .malformedEmail }
        self.value = value
    }

    public var description: String { self.value }
}

/// The password rule: 12 to 1,024 bytes of UTF-8, anything else free.
public enum Password {
    public static let minimumLength = 12
    public static let maximumLength = 1024

    /// `password`, or ``AccountRuleError/passwordLength``.
    public static func checked(_ password: String) throws(AccountRuleError) -> String {
        guard (Self.minimumLength...Self.maximumLength).contains(password.utf8.count) else { throw .passwordLength }
        return password
    }

    /// A new random password for a person to change later: two ``RandomToken``s, 44 characters.
    public static func generate() -> String { RandomToken.make() + RandomToken.make() }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(self.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
