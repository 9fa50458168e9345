import Crypto
import Foundation
import _CryptoExtras

/// A password's stored form: scrypt (swift-crypto's `KDF.Scrypt`) with its parameters and salt written beside the
/// derived key, `scrypt$<log2 N>$<r>$<p>$<salt>$<key>` (base64), so that the parameters can be raised for new
/// hashes while older ones still verify under their own.
///
/// Hashing takes tens of milliseconds of CPU and 32 MiB on purpose: callers run it off the event loops
/// (BlimpStore's `PasswordHasher`; docs/performance.md has the measured cost).
public struct PasswordHash: Sendable, Equatable, CustomStringConvertible {
    /// scrypt's cost parameters.
    public struct Parameters: Sendable, Equatable {
        /// log2 of N, the CPU and memory cost.
        public let logRounds: Int
        /// r, the block size.
        public let blockSize: Int
        /// p, the parallelism.
        public let parallelism: Int

        public init(logRounds: Int, blockSize: Int, parallelism: Int) {
            self.logRounds = logRounds
            self.blockSize = blockSize
            self.parallelism = parallelism
        }

        /// What new hashes use: N = 2^15, r = 8, p = 1, 32 MiB (RFC 7914's interactive-login cost, scaled up once).
        public static let current = Parameters(logRounds: 15, blockSize: 8, parallelism: 1)

        /// The bounds a stored hash's parameters must keep, so that a damaged row cannot ask for gigabytes.
        var isSane: Bool { (10...20).contains(self.logRounds) && (1...32).contains(self.blockSize) && (1...16).contains(self.parallelism) }
    }

    public let parameters: Parameters
    let salt: [UInt8]
    let key: [UInt8]

    static let keyLength = 32
    static let saltLength = 16

    /// Hashes `password` under `parameters` with a new random salt. Slow: call it off the event loops.
    public init(password: String, parameters: Parameters = .current) {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<Self.saltLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        self.init(parameters: parameters, salt: salt, key: Self.derive(password, salt: salt, parameters: parameters))
    }

    init(parameters: Parameters, salt: [UInt8], key: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.key = key
    }

    /// Reads a stored hash, or `nil` when it is not one this code wrote.
    public init?(stored: String) {
        let fields = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0] == "scrypt", let logRounds = Int(fields[1]), let blockSize = Int(fields[2]),
            let parallelism = Int(fields[3]), let salt = Data(base64Encoded: String(fields[4])),
            let key = Data(base64Encoded: String(fields[5])), key.count == Self.keyLength
        else { return nil }
        let parameters = Parameters(logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
        guard parameters.isSane else { return nil }
        self.init(parameters: parameters, salt: Array(salt), key: Array(key))
    }

    /// The stored form.
    public var description: String {
        "scrypt$\(self.parameters.logRounds)$\(self.parameters.blockSize)$\(self.parameters.parallelism)$"
            + "\(Data(self.salt).base64EncodedString())$\(Data(self.key).base64EncodedString())"
    }

    /// Whether `password` is the one hashed, under the stored parameters, compared in constant time. Slow.
    public func verify(_ password: String) -> Bool {
        ConstantTime.equal(Self.derive(password, salt: self.salt, parameters: self.parameters), self.key)
    }

    /// Whether the hash was made with weaker parameters than new hashes get (rehash it at the next sign-in).
    public var needsUpgrade: Bool { self.parameters != .current }

    private static func derive(_ password: String, salt: [UInt8], parameters: Parameters) -> [UInt8] {
        // The bytes of an empty password would have no address for BoringSSL; hash one NUL instead (the rules refuse
        // short passwords before any hash is made).
        let bytes = password.isEmpty ? [0] : Array(password.utf8)
        do {
            let key = try KDF.Scrypt.deriveKey(
                from: bytes, salt: salt, outputByteCount: Self.keyLength, rounds: 1 << parameters.logRounds,
                blockSize: parameters.blockSize, parallelism: parameters.parallelism)
            return key.withUnsafeBytes { Array($0) }
        } catch {
            // Only invalid parameters fail, and `Parameters` are checked; a failure matches nothing.
            return []
        }
    }
}
