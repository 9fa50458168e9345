import BlimpTestSupport
import Foundation
import Testing

/// deploy/blimp.env.example's quoting rule, held against the readers of an env file that run here: a shell that
/// sources it (deploy/README.md's `set -a; . blimp.env`) and systemd's parser of `EnvironmentFile=`. Docker Compose's
/// `env_file` is not installed here; its documented rule (single-quoted values are literal) is the one the example
/// cites.
@Suite struct EnvFileTests {
    /// Values the rule puts in single quotes: a URL with `&`, `?` and a percent-encoded password, double quotes,
    /// spaces, `#` and `;`.
    static let values = [
        "DATABASE_URL": "postgres://u:p%40ss@db/blimp?sslmode=verify-full&application_name=blimp",
        "BLIMP_PUBLIC_URL": #"https://push.example.com/?a="two words"&b=#x;y"#,
    ]

    @Test func theShellAndSystemdReadQuotedValuesAlike() async throws {
        try await withTemporaryFolder { folder in
            let file = folder.appendingPathComponent("blimp.env")
            let text = Self.values.sorted { $0.key < $1.key }.map { "\($0.key)='\($0.value)'\n" }.joined()
            try text.write(to: file, atomically: true, encoding: .utf8)
            let names = Set(Self.values.keys)
            #expect(try await Self.readByShell(file, names: names) == Self.values)
            #expect(try await Self.readBySystemd(file, in: folder, names: names) == Self.values)
        }
    }

    /// The example as shipped follows the rule, and both readers find the same variables in it.
    @Test func theExampleFollowsItsRuleAndReadsAlike() async throws {
        let file = DeployFiles.folder.appendingPathComponent("blimp.env.example")
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
        let assignments = lines.compactMap { $0.wholeMatch(of: /#?([A-Z][A-Z0-9_]*)=(.*)/) }
        #expect(assignments.count > 20)
        for assignment in assignments {
            let value = assignment.2
            #expect(value.wholeMatch(of: /[A-Za-z0-9_.:\/@%+=,-]*/) != nil || value.wholeMatch(of: /'[^']*'/) != nil, "\(assignment.0)")
        }
        let names = Set(lines.compactMap { $0.wholeMatch(of: /([A-Z][A-Z0-9_]*)=.*/).map { String($0.1) } })
        let byShell = try await Self.readByShell(file, names: names)
        #expect(Set(byShell.keys) == names)
        let bySystemd = try await withTemporaryFolder { folder in try await Self.readBySystemd(file, in: folder, names: names) }
        // environment.d drops an empty value (`BLIMP_SECRET_KEY=`) that `EnvironmentFile=` sets empty.
        #expect(bySystemd == byShell.filter { !$0.value.isEmpty })
    }

    /// What `sh` has after `set -a; . file`, of `names`.
    private static func readByShell(_ file: URL, names: Set<String>) async throws -> [String: String] {
        try await Self.environment(after: #"set -a; . "$1""#, [file.path], names: names)
    }

    /// What systemd's env-file parser reads, the one behind `EnvironmentFile=`: systemd-environment-d-generator
    /// reads `$XDG_CONFIG_HOME/environment.d/*.conf` with it and prints the result in shell syntax, which `sh` then
    /// evaluates. (environment.d also expands `$VARIABLE` in values, which `EnvironmentFile=` does not: the values
    /// under test hold no `$`.) The configuration folder is made in `folder`; the generator's complaints (a line it
    /// ignores) are dropped, and show as a missing variable.
    private static func readBySystemd(_ file: URL, in folder: URL, names: Set<String>) async throws -> [String: String] {
        let config = folder.appendingPathComponent("xdg")
        try FileManager.default.createDirectory(at: config.appendingPathComponent("environment.d"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: file, to: config.appendingPathComponent("environment.d/50-blimp.conf"))
        let generator = "/usr/lib/systemd/user-environment-generators/30-systemd-environment-d-generator"
        return try await Self.environment(after: #"set -a; eval "$(XDG_CONFIG_HOME="$1" "$2" 2>/dev/null)""#, [config.path, generator], names: names)
    }

    /// The variables among `names` that `sh -c script` has exported at its end, given `arguments` as `$1`, `$2`, ….
    private static func environment(after script: String, _ arguments: [String], names: Set<String>) async throws -> [String: String] {
        let run = try await ChildProcess.run("/usr/bin/env", ["-i", "PATH=/usr/bin:/bin", "sh", "-c", script + "; exec env -0", "sh"] + arguments)
        #expect(run.status == 0, "\(run.output)")
        var environment: [String: String] = [:]
        for entry in run.output.split(separator: "\0") {
            let pair = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if pair.count == 2, names.contains(String(pair[0])) { environment[String(pair[0])] = String(pair[1]) }
        }
        return environment
    }
}
