import ArgumentParser
import Foundation

/// `blimp`: every Blimp process and admin task, one subcommand each.
@main
struct Blimp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blimp",
        abstract: "A self-hosted, Airship-compatible push service for iOS Live Activities.",
        subcommands: [
            APICommand.self, WorkerCommand.self, MigrateCommand.self, AppsCommand.self, AccountsCommand.self, DevCommand.self, APNsSimCommand.self,
            SimulateDevicesCommand.self, PushCommand.self, SecretKeyCommand.self,
        ]
    )

    /// Runs the command; any failure is one line on standard error (`blimp: …`), never a stack trace.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }  // --help, --version
            FileHandle.standardError.write(Data("blimp: \(message(for: error))\n".utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
