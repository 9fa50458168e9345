@preconcurrency import Crypto
import Foundation

/// An APNs provider-token signing key: the P-256 private key from Apple's `AuthKey_<KEYID>.p8`, with the key id and
/// team id it is registered under.
///
/// A `.p8` file is a PKCS#8 PEM EC P-256 private key (`-----BEGIN PRIVATE KEY-----`); APNs accepts ES256 only
/// (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns). Key and team ids are Apple's 10-character identifiers.
public struct APNsSigningKey: Sendable {
    /// The 10-character key id (the JWT header's `kid`).
    public let keyID: String
    /// The 10-character team id (the JWT claims' `iss`).
    public let teamID: String
    /// The private key that signs provider tokens.
    public let privateKey: P256.Signing.PrivateKey

    /// Parses and checks a `.p8` file's text and its identifiers.
    public init(pem: String, keyID: String, teamID: String) throws(APNsSigningKeyError) {
        guard Self.isAppleIdentifier(keyID) else { throw .invalidKeyID(keyID) }
        guard Self.isAppleIdentifier(teamID) else { throw .invalidTeamID(teamID) }
        guard pem.contains("-----BEGIN PRIVATE KEY-----") || pem.contains("-----BEGIN EC PRIVATE KEY-----") else {
            throw .notPEMPrivateKey
        }
        do {
            self.privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw .notP256
        }
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The key as PKCS#8 PEM, the form it is stored in (sealed).
    public var pemRepresentation: String { self.privateKey.pemRepresentation }

    /// Apple's key and team ids are 10 upper-case letters and digits.
    static func isAppleIdentifier(_ value: String) -> Bool {
        value.utf8.count == 10 && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }
}

/// Why a `.p8` key or its identifiers were refused.
public enum APNsSigningKeyError: Error, Equatable, CustomStringConvertible {
    case invalidKeyID(String)
    case invalidTeamID(String)
    case notPEMPrivateKey
    case notP256

    public var description: String {
        switch self {
        case .invalidKeyID(let id): "the APNs key id must be Apple's 10-character id, like ABC123DEFG (got \"\(id)\")"
        case .invalidTeamID(let id): "the APNs team id must be Apple's 10-character id, like DEF123GHIJ (got \"\(id)\")"
        case .notPEMPrivateKey: "the APNs key is not a PEM private key (expected Apple's AuthKey_<KEYID>.p8)"
        case .notP256: "the APNs key is not a P-256 (ES256) private key; APNs provider tokens need Apple's .p8 key"
        }
    }
}
