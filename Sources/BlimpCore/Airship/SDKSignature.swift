import Crypto
import Foundation

/// The bearer tokens the Airship iOS SDK signs itself (`AirshipUtils.generateSignedToken`): the parts joined with
/// `:`, HMAC-SHA256 keyed with the app secret, in base64.
///
/// App requests sign `appKey:nonce:timestamp`; channel requests sign `appKey:channelID:nonce:timestamp`; SDKs before
/// 17.x signed `appKey:channelID` alone (docs/references.md#airship-ios-sdk-requests).
///
/// One value per app secret: the HMAC's keyed state is computed once, and each token costs only its own bytes.
public struct SDKSignature: @unchecked Sendable {
    // `HMAC` is a value whose hash states copy on write, so a shared, never-mutated value is safe to copy from any
    // thread; it is not declared `Sendable`.
    private let keyed: HMAC<SHA256>

    public init(appSecret: String) {
        self.keyed = HMAC(key: SymmetricKey(data: Data(appSecret.utf8)))
    }

    /// The token for `parts`.
    public func sign(_ parts: [String]) -> String {
        self.code(parts).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// Whether `token` is the signature of `parts`, compared in constant time.
    public func isValid(_ token: String, parts: [String]) -> Bool {
        guard let given = Data(base64Encoded: token) else { return false }
        return self.code(parts).withUnsafeBytes { expected in ConstantTime.equal(expected, given) }
    }

    /// The MAC of the parts joined with `:`, hashed as one byte array.
    private func code(_ parts: [String]) -> HMAC<SHA256>.MAC {
        var message: [UInt8] = []
        message.reserveCapacity(parts.reduce(parts.count) { $0 + $1.utf8.count })
        for (index, part) in parts.enumerated() {
            if index > 0 { message.append(UInt8(ascii: ":")) }
            message.append(contentsOf: part.utf8)
        }
        var mac = self.keyed
        mac.update(data: message)
        return mac.finalize()
    }
}
