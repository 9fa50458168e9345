/// A checked request to create an app (a tenant): one iOS bundle id with its APNs credentials.
public struct NewApp: Sendable {
    /// The app's unique name.
    public let name: String
    /// The iOS bundle id; Live Activity pushes go to the topic `<bundle id>.push-type.liveactivity`.
    public let bundleID: String
    /// The key that signs the app's provider tokens.
    public let signingKey: APNsSigningKey
    /// Whether the app's tokens are production or sandbox tokens.
    public let environment: APNsEnvironment

    /// Checks the name and bundle id; the signing key is checked when it is parsed.
    public init(
        name: String,
        bundleID: String,
        signingKey: APNsSigningKey,
        environment: APNsEnvironment
    ) throws(NewAppError) {
        guard Self.isValidName(name) else { throw .invalidName(name) }
        guard Self.isValidBundleID(bundleID) else { throw .invalidBundleID(bundleID) }
        self.name = name
        self.bundleID = bundleID
        self.signingKey = signingKey
        self.environment = environment
    }

    /// 1 to 100 characters, no surrounding white space, no control characters.
    static func isValidName(_ name: String) -> Bool {
        (1...100).contains(name.count)
            && name.trimmingCharacters(in: .whitespacesAndNewlines) == name
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Apple's bundle id form: reverse-DNS, at least two dot-separated parts of ASCII letters, digits and hyphens,
    /// at most 155 characters.
    static func isValidBundleID(_ bundleID: String) -> Bool {
        let parts = bundleID.split(separator: ".", omittingEmptySubsequences: false)
        return bundleID.utf8.count <= 155 && parts.count >= 2
            && parts.allSatisfy { part in
                !part.isEmpty
                    && part.utf8.allSatisfy { byte in
                        byte == UInt8(ascii: "-") || (byte < 0x80 && Character(Unicode.Scalar(byte)).isLetterOrDigit)
                    }
            }
    }
}

/// Why an app could not be created.
public enum NewAppError: Error, Equatable, CustomStringConvertible {
    case invalidName(String)
    case invalidBundleID(String)

    public var description: String {
        switch self {
        case .invalidName(let name):
            "the app name must be 1 to 100 characters without surrounding spaces (got \"\(name)\")"
        case .invalidBundleID(let id):
            "the bundle id must be reverse-DNS like com.example.app: letters, digits and hyphens between dots (got \"\(id)\")"
        }
    }
}

extension Character {
    fileprivate var isLetterOrDigit: Bool { self.isLetter || self.isNumber }
}
