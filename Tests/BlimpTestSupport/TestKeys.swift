import BlimpCore
import Crypto
import Foundation

/// Keys for tests, made fresh for each use.
public enum TestKeys {
    /// A new APNs-style `.p8`: a PKCS#8 PEM P-256 private key.
    public static func p8() -> String { P256.Signing.PrivateKey().pemRepresentation }

    /// A new `BLIMP_SECRET_KEY` value.
    public static func serverKeyBase64() -> String { ServerKey.generate().base64 }
}
