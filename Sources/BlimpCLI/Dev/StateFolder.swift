import BlimpCore
import Crypto
import Foundation

/// `blimp dev`'s state folder (`.blimp/` by default): the generated server key, the demo app's `.p8` key and its
/// credentials. Files are created readable by their owner only and reused on the next run.
struct StateFolder {
    let path: String

    init(path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(
            atPath: path,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
    }

    /// `BLIMP_SECRET_KEY` when set, else the folder's `secret.key`, generated on first use.
    func serverKey() throws -> ServerKey {
        if ProcessInfo.processInfo.environment[ServerKeySetting.environmentName]?.isEmpty == false {
            return try ServerKeySetting.resolve()
        }
        if let text = self.read("secret.key") { return try ServerKey(base64: text) }
        let (key, base64) = ServerKey.generate()
        try self.write("secret.key", base64 + "\n")
        return key
    }

    /// The demo app's `.p8` key, generated on first use.
    func demoKeyPEM(keyID: String) throws -> String {
        let name = "AuthKey_\(keyID).p8"
        if let pem = self.read(name) { return pem }
        let pem = P256.Signing.PrivateKey().pemRepresentation + "\n"
        try self.write(name, pem)
        return pem
    }

    func read(_ name: String) -> String? {
        FileManager.default.contents(atPath: self.file(name)).map { String(decoding: $0, as: UTF8.self) }
    }

    func write(_ name: String, _ contents: String) throws {
        guard FileManager.default.createFile(
            atPath: self.file(name),
            contents: Data(contents.utf8),
            attributes: [.posixPermissions: 0o600]
        ) else {
            throw CLIError("cannot write \(self.file(name))")
        }
    }

    func file(_ name: String) -> String { (self.path as NSString).appendingPathComponent(name) }
}
