import Foundation

/// What the built `blimp` accepts, to hold deploy files against: each subcommand's flags, from its `--help`, and the
/// environment variables the sources read.
actor BlimpSurface {
    private var helps: [[String]: Set<String>?] = [:]

    /// The long flags `blimp <subcommand> --help` lists, or `nil` when there is no such subcommand.
    func flags(of subcommand: [String]) async throws -> Set<String>? {
        if let known = self.helps[subcommand] { return known }
        // An unknown subcommand's --help is the root's help, whose usage line does not name it.
        let help = try await BlimpProcess.run(subcommand + ["--help"])
        let named = !subcommand.isEmpty && help.stdout.contains("USAGE: blimp \(subcommand.joined(separator: " ")) ")
        let flags = help.status == 0 && named ? Self.options(inHelp: help.stdout) : nil
        self.helps[subcommand] = flags
        return flags
    }

    /// The flags of the help's option lines (`  --name <name>   text`, `  -h, --help`, `  --[no-]x`), not those
    /// its descriptions mention.
    static func options(inHelp help: String) -> Set<String> {
        var flags: Set<String> = []
        for line in help.split(separator: "\n") {
            guard let head = line.firstMatch(of: /^ {2}(-\S.*?)(?: {2,}|$)/)?.1 else { continue }
            for flag in head.matches(of: /--[a-z0-9-]+/) { flags.insert(String(flag.0)) }
        }
        return flags
    }

    /// Every environment variable the sources read: every string literal that is a whole upper-case
    /// `NAME_WITH_UNDERSCORES` under one of the deployment's prefixes (`environment["LOG_LEVEL"]`,
    /// `LimitOptions.environment("BLIMP_PUSH_RATE_LIMIT", …)`, `previousEnvironmentName = "BLIMP_PREVIOUS_SECRET_KEY"`):
    /// however a variable is read, its name is one. Other such literals are wire names (Airship's event types).
    static func variablesRead(sources: URL = DeployFiles.folder.deletingLastPathComponent().appendingPathComponent("Sources")) throws
        -> Set<String>
    {
        var names: Set<String> = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? []
        for file in files where file.pathExtension == "swift" {
            for literal in try String(contentsOf: file, encoding: .utf8).matches(of: /"((?:BLIMP|DATABASE|LOG|OTEL)(?:_[A-Z0-9]+)+)"/) {
                names.insert(String(literal.1))
            }
        }
        return names
    }
}
