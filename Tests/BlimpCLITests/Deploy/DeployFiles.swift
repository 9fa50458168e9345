import BlimpTestSupport
import Foundation

/// The files under `deploy/`, read the way the tools that use them would: every way they start `blimp`, and every
/// environment variable they hand it. YAML is parsed by PyYAML (anchors and merge keys resolved), the rest by hand.
struct DeployFiles {
    /// One way a file starts `blimp`.
    struct Invocation {
        /// The file, relative to the deploy folder.
        let file: String
        /// What follows the executable: the subcommand and its flags.
        let arguments: [String]
        /// Seconds between the stop signal and a kill (compose's stop_grace_period, a pod's grace period, systemd's
        /// TimeoutStopSec), with each tool's default.
        let stopTimeout: Int

        /// The subcommand's words: the arguments before the first flag.
        var subcommand: [String] { Array(self.arguments.prefix { !$0.hasPrefix("-") }) }
        /// The long flags named, without values.
        var flags: [String] {
            self.arguments.filter { $0.hasPrefix("--") }.map { String($0.split(separator: "=", maxSplits: 1)[0]) }
        }
    }

    /// The repository's deploy folder.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy")

    private(set) var invocations: [Invocation] = []
    /// Variables a file sets for `blimp` (not the env example's), with the file.
    private(set) var variables: [(file: String, name: String)] = []
    /// Every variable the env example names, set or commented out.
    private(set) var exampleVariables: Set<String> = []
    /// YAML files that did not parse, with PyYAML's complaint.
    private(set) var yamlErrors: [String: String] = [:]
    /// Every YAML file, relative to the folder.
    private(set) var yamlFiles: [String] = []
    /// The Dockerfile's text.
    private(set) var dockerfile = ""
    /// The Deployments, by name, with the file and their `replicas` (nil when left out).
    private(set) var deployments: [String: (file: String, replicas: Int?)] = [:]
    /// The Deployments a HorizontalPodAutoscaler scales, by name.
    private(set) var autoscaledDeployments: Set<String> = []

    /// Reads every file under `folder`.
    init(folder: URL = Self.folder) async throws {
        let files = try Self.files(under: folder)
        self.yamlFiles = files.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
        for (file, parsed) in try await Self.parseYAML(self.yamlFiles, in: folder) {
            switch parsed {
            case .failure(let error): self.yamlErrors[file] = error.description
            case .success(let documents): for document in documents { self.readYAML(document, file: file) }
            }
        }
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            if file.hasSuffix("Dockerfile") {
                self.dockerfile = text
                self.readDockerfile(text, file: file)
            } else if file.hasSuffix(".service") || file.hasSuffix(".conf") {
                self.readUnit(text, file: file)
            } else if file.hasSuffix(".env.example") {
                self.exampleVariables = Set(text.split(separator: "\n").compactMap { Self.match(#"^#?([A-Z][A-Z0-9_]*)="#, in: String($0)) })
            }
        }
    }

    // MARK: YAML: compose and Kubernetes

    private mutating func readYAML(_ document: Any, file: String) {
        guard let object = document as? [String: Any] else { return }
        if let services = object["services"] as? [String: [String: Any]] {
            for service in services.values where Self.isBlimp(service["image"]) || service["build"] != nil {
                self.readComposeService(service, file: file)
            }
        }
        switch object["kind"] as? String {
        case "HorizontalPodAutoscaler":
            if let target = (object["spec"] as? [String: Any])?["scaleTargetRef"] as? [String: Any], target["kind"] as? String == "Deployment",
                let name = target["name"] as? String
            {
                self.autoscaledDeployments.insert(name)
            }
        case "Deployment":
            if let name = (object["metadata"] as? [String: Any])?["name"] as? String {
                self.deployments[name] = (file, (object["spec"] as? [String: Any])?["replicas"] as? Int)
            }
            self.readPodSpecs(in: object, file: file)
        case "ConfigMap", "Secret":
            for key in ["data", "stringData"] {
                for name in (object[key] as? [String: Any] ?? [:]).keys { self.variables.append((file, name)) }
            }
        default:
            self.readPodSpecs(in: object, file: file)
        }
    }

    private mutating func readComposeService(_ service: [String: Any], file: String) {
        if let environment = service["environment"] as? [String: Any] {
            for name in environment.keys { self.variables.append((file, name)) }
        } else if let environment = service["environment"] as? [String] {
            for entry in environment { self.variables.append((file, String(entry.split(separator: "=")[0]))) }
        }
        let command = service["command"] as? [String] ?? (service["command"] as? String).map { $0.split(separator: " ").map(String.init) }
        guard let command else { return }
        let grace = (service["stop_grace_period"] as? String).flatMap(Self.seconds) ?? 10
        self.invocations.append(Invocation(file: file, arguments: command, stopTimeout: grace))
    }

    /// Every pod spec (an object with `containers`) in `object`, however deep: Deployments, Jobs, CronJobs.
    private mutating func readPodSpecs(in object: Any, file: String) {
        if let list = object as? [Any] {
            for element in list { self.readPodSpecs(in: element, file: file) }
            return
        }
        guard let object = object as? [String: Any] else { return }
        guard let containers = object["containers"] as? [[String: Any]] else {
            for value in object.values { self.readPodSpecs(in: value, file: file) }
            return
        }
        let grace = object["terminationGracePeriodSeconds"] as? Int ?? 30
        for container in containers + (object["initContainers"] as? [[String: Any]] ?? []) where Self.isBlimp(container["image"]) {
            for variable in container["env"] as? [[String: Any]] ?? [] {
                if let name = variable["name"] as? String { self.variables.append((file, name)) }
            }
            var arguments = (container["command"] as? [String] ?? []) + (container["args"] as? [String] ?? [])
            if let first = arguments.first, first.hasSuffix("blimp") { arguments.removeFirst() }
            self.invocations.append(Invocation(file: file, arguments: arguments, stopTimeout: grace))
        }
    }

    /// Whether an image reference names the blimp image (`blimp`, `registry/blimp:tag`, `${BLIMP_IMAGE:-blimp:latest}`).
    private static func isBlimp(_ image: Any?) -> Bool {
        guard let image = image as? String else { return false }
        return image == "blimp" || image.contains("/blimp") || image.contains("blimp:")
    }

    // MARK: Dockerfile and systemd

    private mutating func readDockerfile(_ text: String, file: String) {
        for instruction in Self.dockerInstructions(text) {
            if instruction.hasPrefix("CMD "), let data = instruction.dropFirst(4).data(using: .utf8),
                let command = try? JSONSerialization.jsonObject(with: data) as? [String]
            {
                self.invocations.append(Invocation(file: file, arguments: command, stopTimeout: 10))
            } else if instruction.hasPrefix("ENV ") {
                for pair in instruction.dropFirst(4).split(separator: " ") { self.variables.append((file, String(pair.split(separator: "=")[0]))) }
            }
        }
    }

    /// The Dockerfile's instructions, continuation lines joined and comments dropped.
    static func dockerInstructions(_ text: String) -> [String] {
        text.replacingOccurrences(of: "\\\n", with: " ").split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    private mutating func readUnit(_ text: String, file: String) {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let timeout = lines.compactMap { Self.match(#"^TimeoutStopSec=(.+)$"#, in: $0) }.last.flatMap(Self.seconds) ?? 90
        for line in lines {
            if let command = Self.match(#"^ExecStart=[-@:+!]*(.+)$"#, in: line) {
                let words = command.split(separator: " ").map(String.init)
                if words[0].hasSuffix("/blimp") {
                    self.invocations.append(Invocation(file: file, arguments: Array(words.dropFirst()), stopTimeout: timeout))
                }
            } else if let assignments = Self.match(#"^Environment=(.+)$"#, in: line) {
                for pair in assignments.split(separator: " ") { self.variables.append((file, String(pair.split(separator: "=")[0]))) }
            }
        }
    }

    // MARK: Helpers

    /// Every regular file under `folder`, relative to it.
    private static func files(under folder: URL) throws -> [String] {
        let base = folder.standardizedFileURL.path + "/"
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        return try (enumerator?.allObjects as? [URL] ?? [])
            .filter { try $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true }
            .map { String($0.standardizedFileURL.path.dropFirst(base.count)) }
            .sorted()
    }

    /// Each file's YAML documents as JSON values, or PyYAML's error.
    private static func parseYAML(_ files: [String], in folder: URL) async throws -> [String: Result<[Any], CLIExpectationFailed>] {
        let script = """
            import json, sys, yaml
            result = {}
            for path in sys.argv[1:]:
                try:
                    with open(path) as f:
                        result[path] = {"documents": list(yaml.safe_load_all(f))}
                except yaml.YAMLError as error:
                    result[path] = {"error": str(error)}
            print(json.dumps(result, default=str))
            """
        let paths = files.map { folder.appendingPathComponent($0).path }
        let run = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script] + paths)
        guard run.status == 0, let parsed = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: [String: Any]] else {
            throw CLIExpectationFailed("python3 with PyYAML could not read the YAML files: \(run.output)")
        }
        var results: [String: Result<[Any], CLIExpectationFailed>] = [:]
        for (file, path) in zip(files, paths) {
            if let documents = parsed[path]?["documents"] as? [Any] {
                results[file] = .success(documents.filter { !($0 is NSNull) })
            } else {
                results[file] = .failure(CLIExpectationFailed(parsed[path]?["error"] as? String ?? "not read"))
            }
        }
        return results
    }

    /// `60`, `60s`, `1m30s`, `2min` in seconds.
    static func seconds(_ text: String) -> Int? {
        var total = 0
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { return nil }
        while let match = rest.firstMatch(of: /^(\d+)(h|min|m|s)?/) {
            let unit =
                switch match.2 {
                case "h": 3600
                case "m", "min": 60
                default: 1
                }
            total += Int(match.1)! * unit
            rest = rest[match.range.upperBound...]
        }
        return rest.isEmpty ? total : nil
    }

    /// The first capture group of `pattern` in `text`.
    private static func match(_ pattern: String, in text: String) -> String? {
        guard let regex = try? Regex(pattern), let match = text.firstMatch(of: regex), match.count > 1,
            let captured = match[1].substring
        else { return nil }
        return String(captured)
    }
}
