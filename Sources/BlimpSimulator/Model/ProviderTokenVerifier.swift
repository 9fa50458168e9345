@preconcurrency import Crypto
import Foundation
import Synchronization

/// Who a verified provider token speaks for, and when it was issued.
struct VerifiedProviderToken: Sendable, Equatable {
    let keyID: String
    let teamID: String
    /// `iat`, seconds since the epoch.
    let issuedAt: Double
}

/// The trusted signing keys, and the provider tokens already verified against them.
///
/// Checking an ES256 signature costs far more than answering a request, and a sender reuses one token for 20 to 60
/// minutes across all its connections (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns), so each token is verified once and
/// remembered. Thread-safe.
final class ProviderTokenVerifier: Sendable {
    private struct TrustedKey {
        let teamID: String
        let publicKey: P256.Signing.PublicKey
    }

    private struct State {
        var keys: [String: TrustedKey] = [:]
        var verified: [Substring: VerifiedProviderToken] = [:]
    }

    private let state = Mutex(State())
    private let cacheSize: Int

    init(cacheSize: Int) {
        self.cacheSize = cacheSize
    }

    /// Trusts `publicKey` for tokens with `kid` `keyID` and `iss` `teamID`, replacing any key with that id.
    func trust(keyID: String, teamID: String, publicKey: P256.Signing.PublicKey) {
        self.state.withLock {
            $0.keys[keyID] = TrustedKey(teamID: teamID, publicKey: publicKey)
            $0.verified.removeAll()
        }
    }

    /// The key ids trusted, with their team ids.
    var trustedKeys: [String: String] {
        self.state.withLock { $0.keys.mapValues(\.teamID) }
    }

    /// Verifies `jwt`, or finds it already verified. Its age is the caller's to check.
    ///
    /// - Throws: 403 `InvalidProviderToken` for a malformed token, an untrusted key id, a team other than the key's,
    ///   or a signature that does not verify (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns; https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
    func verify(_ jwt: Substring) throws(Rejection) -> VerifiedProviderToken {
        if let known = self.state.withLock({ $0.verified[jwt] }) { return known }
        let token = try CompactProviderToken(jwt)
        guard let key = self.state.withLock({ $0.keys[token.keyID] }), key.teamID == token.teamID,
            key.publicKey.isValidSignature(token.signature, for: Data(token.signingInput))
        else {
            throw Rejection(.invalidProviderToken)
        }
        let verified = VerifiedProviderToken(keyID: token.keyID, teamID: token.teamID, issuedAt: token.issuedAt)
        self.state.withLock {
            if $0.verified.count >= self.cacheSize { $0.verified.removeAll(keepingCapacity: true) }
            $0.verified[jwt] = verified
        }
        return verified
    }
}
