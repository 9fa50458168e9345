import Crypto
import Foundation

/// The Standard Webhooks signature of one delivery
/// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#signature-scheme):
/// `v1,` and the base64 of HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, one per secret in force,
/// separated by spaces (while a rotated secret overlaps the new one, receivers holding either verify).
public enum WebhookSignature {
    /// The `webhook-signature` header's value.
    public static func header(id: String, timestamp: Int64, body: Data, secrets: [WebhookSecret]) -> String {
        var content = Data("\(id).\(timestamp).".utf8)
        content.append(body)
        return secrets.map { secret in
            let mac = HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret.bytes))
            return "v1," + Data(mac).base64EncodedString()
        }.joined(separator: " ")
    }
}
