import Crypto
import Foundation

/// The bearer tokens the Airship iOS SDK signs itself (`AirshipUtils.generateSignedToken`): the parts joined with
/// `:`, HMAC-SHA256 keyed with the app secret, in base64.
///
/// App requests sign `appKey:nonce:timestamp`; channel requests sign `appKey:channelID:nonce:timestamp`; SDKs before
/// 17.x signed `appKey:channelID` alone (reference: airship-ios-sdk.md §2).
public enum SDKSignature {
    /// The token for `parts`, signed with `appSecret`.
    public static func sign(_ parts: [String], appSecret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(parts.joined(separator: ":").utf8),
            using: SymmetricKey(data: Data(appSecret.utf8))
        )
        return Data(mac).base64EncodedString()
    }

    /// Whether `token` is the signature of `parts` under `appSecret`, compared in constant time.
    public static func isValid(_ token: String, parts: [String], appSecret: String) -> Bool {
        guard let given = Data(base64Encoded: token) else { return false }
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(parts.joined(separator: ":").utf8),
            using: SymmetricKey(data: Data(appSecret.utf8))
        )
        return mac == given
    }
}
