import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238) as authenticator apps make them: HMAC-SHA-1, 30-second steps, 6 digits.
/// A code is accepted in its step or one step either side (clock drift); the caller remembers the last step it
/// accepted and refuses any step not after it, so that a code is never accepted twice.
public struct TOTP: Sendable, Equatable {
    /// The shared secret (20 random bytes when generated, as RFC 4226 recommends).
    public let secret: [UInt8]

    public static let step: TimeInterval = 30
    public static let digits = 6
    /// Steps accepted either side of the current one.
    public static let window: Int64 = 1

    public init(secret: [UInt8]) { self.secret = secret }

    /// A new secret from the system's secure random source.
    public static func generate() -> TOTP {
        var generator = SystemRandomNumberGenerator()
        return TOTP(secret: (0..<20).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The secret in base32 (RFC 4648, no padding): what a person types into an authenticator app.
    public var base32Secret: String { Base32.encode(self.secret) }

    /// The secret from its base32 form, or `nil`.
    public init?(base32Secret: String) {
        guard let secret = Base32.decode(base32Secret), !secret.isEmpty else { return nil }
        self.secret = secret
    }

    /// The `otpauth://` URI an authenticator app reads (as a QR code or pasted), labelled `issuer:account`.
    public func uri(account: String, issuer: String) -> String {
        let label = "\(issuer):\(account)".addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", "?", "#"])) ?? account
        let issuerQuery = issuer.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["&", "=", "+"])) ?? issuer
        return "otpauth://totp/\(label)?secret=\(self.base32Secret)&issuer=\(issuerQuery)&algorithm=SHA1&digits=\(Self.digits)&period=\(Int(Self.step))"
    }

    /// The time step holding `date`.
    public static func timeStep(at date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / Self.step).rounded(.down)) }

    /// The code for time step `step`, zero-padded to ``digits`` (``code(step:digits:)`` with the default length).
    public func code(step: Int64) -> String { self.code(step: step, digits: Self.digits) }

    /// The code for `step` with `digits` digits (RFC 6238's test vectors use 8).
    public func code(step: Int64, digits: Int) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: self.secret)))
        let offset = Int(mac[mac.count - 1] & 0x0F)
        let binary = (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The step whose code `code` is, within the window around `date` and after `lastAccepted`; `nil` when it is
    /// none (wrong, expired, or already used). Spaces in the code are ignored.
    public func acceptedStep(for code: String, at date: Date, after lastAccepted: Int64?) -> Int64? {
        let typed = code.filter { !$0.isWhitespace }
        guard typed.utf8.count == Self.digits, typed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        let now = Self.timeStep(at: date)
        var accepted: Int64?
        for step in (now - Self.window)...(now + Self.window) where ConstantTime.equal(Array(self.code(step: step).utf8), Array(typed.utf8)) {
            accepted = step
        }
        guard let accepted, accepted > (lastAccepted ?? .min) else { return nil }
        return accepted
    }
}

/// RFC 4648 base32 without padding, as authenticator apps take TOTP secrets.
enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(Self.alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(Self.alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of `text` (case, spaces and padding ignored), or `nil` for any other character.
    static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.uppercased().utf8 where byte != UInt8(ascii: " ") && byte != UInt8(ascii: "=") {
            guard let value = Self.alphabet.firstIndex(of: byte) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                output.append(UInt8((buffer >> UInt32(bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return output
    }
}
