import Foundation

/// An APNs provider token: an ES256 JWT with header `{alg, kid}` and claims `{iss, iat}`.
///
/// `iat` is whole seconds as a JSON number (APNSwift once sent a string; jwt-kit writes a fraction), and the signature
/// is the raw 64-byte R‖S form (RFC 7518 §3.4) (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
public struct ProviderToken: Sendable, Equatable {
    /// The compact JWT, sent as `authorization: bearer <jwt>`.
    public let jwt: String
    /// When it was issued, in whole seconds.
    public let issuedAt: Date

    /// Signs a new token with `key`, issued at `now` (rounded down to whole seconds).
    public init(key: APNsSigningKey, now: Date) throws {
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        // Key and team ids are checked to be 10 letters and digits, so they need no JSON escaping.
        let header = #"{"alg":"ES256","kid":"\#(key.keyID)"}"#
        let claims = #"{"iss":"\#(key.teamID)","iat":\#(seconds)}"#
        let signingInput = Data(header.utf8).base64URLEncodedString() + "." + Data(claims.utf8).base64URLEncodedString()
        let signature = try key.privateKey.signature(for: Data(signingInput.utf8))
        self.jwt = signingInput + "." + signature.rawRepresentation.base64URLEncodedString()
        self.issuedAt = Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The bearer value for the `authorization` header.
    public var authorization: String { "bearer \(self.jwt)" }

    /// How long since it was issued.
    public func age(at now: Date) -> Duration { .seconds(now.timeIntervalSince(self.issuedAt)) }
}
