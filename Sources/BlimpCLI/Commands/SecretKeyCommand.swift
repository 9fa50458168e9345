import ArgumentParser
import BlimpCore
import BlimpStore
import Foundation

/// `blimp secret-key`: make a server key (`BLIMP_SECRET_KEY`), and move every stored secret onto a new one.
struct SecretKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-key",
        abstract: "Generate a server key (BLIMP_SECRET_KEY), and seal the stored secrets again under a new one.",
        subcommands: [Generate.self, Rotate.self]
    )

    /// `blimp secret-key generate`: prints a new key.
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a new random server key: 32 bytes in base64.")

        func run() {
            print(ServerKey.generate().base64)
        }
    }

    /// `blimp secret-key rotate`: seals every stored secret under `BLIMP_SECRET_KEY` that only
    /// `BLIMP_PREVIOUS_SECRET_KEY` opens; `--check` counts them instead.
    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Seal every stored secret again under BLIMP_SECRET_KEY, from BLIMP_PREVIOUS_SECRET_KEY.",
            discussion: """
                Rotating the server key: 1) run every process with the new key as BLIMP_SECRET_KEY and the old one \
                as BLIMP_PREVIOUS_SECRET_KEY; 2) run this command with both set (safe while processes serve; run it \
                again if it stops midway); 3) an hour later, when the tokens issued under the old key have expired, \
                run every process without BLIMP_PREVIOUS_SECRET_KEY. Contact ids do not change.
                It refuses, changing nothing, when a stored secret opens with neither key, and names it.
                """
        )

        @Flag(help: "Count the stored secrets by the key that opens them and change nothing; fail while any needs rotating or opens with neither key.")
        var check = false
        @Option(help: "Rows sealed again per transaction.") var batchSize = 100
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            guard self.batchSize > 0 else { throw ValidationError("--batch-size must be at least 1") }
        }

        func run() async throws {
            let serverKey = try ServerKeySetting.resolve()
            guard self.check || serverKey.hasPrevious else {
                throw CLIError(
                    "\(ServerKeySetting.previousEnvironmentName) is not set: set it to the key being replaced, and \(ServerKeySetting.environmentName) to the new one")
            }
            let logger = self.logging.makeLogger(label: "blimp.secret-key")
            let count = try await self.database.resolve().withDatabase(logger: logger) { client in
                let rotation = ServerKeyRotation(client: client, logger: logger, serverKey: serverKey, batchSize: self.batchSize)
                return self.check ? try await rotation.check() : try await rotation.rotate()
            }
            let rows = "apps: \(count.rows["apps", default: 0]), deployment secrets: \(count.rows["deployment_secrets", default: 0])"
            guard self.check else {
                print("sealed again under BLIMP_SECRET_KEY: \(count.previous); already under it: \(count.current) (\(rows))")
                FileHandle.standardError.write(
                    Data("next: an hour from now, run every process without BLIMP_PREVIOUS_SECRET_KEY\n".utf8))
                return
            }
            print(rows)
            print("under BLIMP_SECRET_KEY: \(count.current)")
            print("under BLIMP_PREVIOUS_SECRET_KEY only: \(count.previous)")
            print("under neither: \(count.unopenable.count)")
            guard count.unopenable.isEmpty else { throw ServerKeyRotationError.unopenable(count.unopenable) }
            guard count.previous == 0 else {
                throw CLIError("\(count.previous) stored secrets open with BLIMP_PREVIOUS_SECRET_KEY only: run blimp secret-key rotate")
            }
        }
    }
}
