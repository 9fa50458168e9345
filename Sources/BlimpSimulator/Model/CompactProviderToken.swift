@preconcurrency import Crypto
import Foundation

/// A provider token taken apart, before its signature is checked: header `{alg: ES256, kid}`, claims `{iss, iat}`
/// with a numeric `iat`, and a raw 64-byte R‖S signature (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
///
/// A string `iat` is refused as APNSwift's test server refuses it (whether APNs accepts one is unconfirmed,
/// https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns), and so is a DER signature.
struct CompactProviderToken {
    let keyID: String
    let teamID: String
    /// `iat` in seconds since the epoch.
    let issuedAt: Double
    let signature: P256.Signing.ECDSASignature
    /// `<header>.<claims>` as sent: what the signature covers.
    let signingInput: Substring.UTF8View

    /// - Throws: 403 `InvalidProviderToken` for anything but a well-formed ES256 provider token.
    init(_ jwt: Substring) throws(Rejection) {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(base64URLEncoded: parts[0]),
            let claimsData = Data(base64URLEncoded: parts[1]),
            let signatureData = Data(base64URLEncoded: parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData),
            header.alg == "ES256",
            let claims = try? JSONDecoder().decode(Claims.self, from: claimsData),
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            signatureData.count == 64
        else {
            throw Rejection(.invalidProviderToken)
        }
        self.keyID = header.kid
        self.teamID = claims.iss
        self.issuedAt = claims.iat
        self.signature = signature
        self.signingInput = jwt[parts[0].startIndex..<parts[1].endIndex].utf8
    }

    private struct Header: Decodable {
        let alg: String
        let kid: String
    }

    private struct Claims: Decodable {
        let iss: String
        let iat: Double
    }
}

extension Data {
    /// Decodes base64url (RFC 4648 §5) with or without padding; `nil` for anything else.
    init?(base64URLEncoded text: Substring) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
