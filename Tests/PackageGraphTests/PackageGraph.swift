import Foundation

/// The targets Package.swift declares, read from its text, and the modules their sources import: what
/// ``PackageGraphTests`` holds side by side. It never runs `swift package`, which would wait on the build lock the test
/// run holds, so it reads this manifest's own style only: each target a `.target(`, `.executableTarget(` or
/// `.testTarget(` call with `name:` first, then `dependencies: [...]`, `path:` and `exclude: [...]` as needed, and
/// whole-line `//` comments.
enum PackageGraph {
    /// A target as the manifest declares it.
    struct Target: Equatable {
        var name: String
        /// Its folder, from the package root: `path:`, else `Sources/<name>` (`Tests/<name>` for a test target).
        var path: String
        /// What `exclude:` leaves out, from ``path``.
        var excluded: [String]
        /// The modules it may import: its dependencies by name, target or product alike. A product's module is taken to
        /// be named as the product, which holds for every product this manifest names (not for all: swift-nio's
        /// `_NIOFileSystem` also brings `NIOFileSystem`); such a module would show up here as undeclared.
        var dependencies: Set<String>
    }

    /// A module a target imports without declaring it.
    struct Undeclared: Hashable, CustomStringConvertible {
        var target: String
        var module: String

        var description: String { "\(self.target) imports \(self.module)" }
    }

    /// Modules every target may import: the toolchain's own.
    static let exempt: Set<String> = ["Foundation", "Glibc", "Synchronization", "Testing"]

    /// The imports in `target`'s sources that its dependencies do not declare.
    static func undeclared(by target: Target, importing modules: Set<String>) -> [Undeclared] {
        modules.subtracting(target.dependencies).subtracting(Self.exempt).sorted()
            .map { Undeclared(target: target.name, module: $0) }
    }

    // MARK: - The manifest

    /// The targets `manifest` (the text of a Package.swift) declares, in order.
    static func targets(inManifest manifest: String) -> [Target] {
        let text = manifest.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            .joined(separator: "\n")
        var targets: [Target] = []
        var rest = text[...]
        while let call = rest.firstMatch(of: #/\.(target|executableTarget|testTarget)\(/#) {
            let arguments = Self.enclosed(rest[call.range.upperBound...])
            rest = rest[arguments.endIndex...]
            guard let name = arguments.firstMatch(of: #/name:\s*"([^"]+)"/#).map({ String($0.output.1) }) else { continue }
            let folder = call.output.1 == "testTarget" ? "Tests" : "Sources"
            let path = arguments.firstMatch(of: #/path:\s*"([^"]+)"/#).map { String($0.output.1) }
            let excluded = Self.list("exclude", in: arguments).matches(of: #/"([^"]+)"/#).map { String($0.output.1) }
            // `.product(name: "X", package: "x")` (or `.target(name: "X")`), else a bare `"X"`.
            let dependency = #/\.\w+\(\s*name:\s*"(?<named>[^"]+)"[^)]*\)|"(?<bare>[^"]+)"/#
            let dependencies = Self.list("dependencies", in: arguments).matches(of: dependency)
                .compactMap { ($0.output.named ?? $0.output.bare).map(String.init) }
            targets.append(Target(name: name, path: path ?? "\(folder)/\(name)", excluded: excluded, dependencies: Set(dependencies)))
        }
        return targets
    }

    /// The elements of the array argument `label: [...]` in `arguments`; empty without one.
    private static func list(_ label: String, in arguments: Substring) -> Substring {
        guard let start = arguments.firstRange(of: "\(label): [") else { return arguments.prefix(0) }
        return Self.enclosed(arguments[start.upperBound...])
    }

    /// The text from `text`'s start up to the bracket that closes the one just before it, brackets inside string
    /// literals aside.
    private static func enclosed(_ text: Substring) -> Substring {
        var depth = 0
        var inString = false
        for index in text.indices {
            let character = text[index]
            if character == "\"" { inString.toggle() }
            guard !inString else { continue }
            if character == "(" || character == "[" { depth += 1 }
            if character == ")" || character == "]" {
                if depth == 0 { return text[..<index] }
                depth -= 1
            }
        }
        return text
    }

    // MARK: - The sources

    /// The modules `source` (a Swift file's text) imports, in any form: `@testable import X`, `import struct X.Y`,
    /// `public import X`. Lines inside multi-line string literals (the Python scripts tests run, sample sources) are
    /// text, not imports, and so is an escaped `\"""` inside one.
    static func imports(inSource source: String) -> Set<String> {
        let pattern = #/\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?(\w+)/#
        var modules: Set<String> = []
        var inMultilineString = false
        for line in source.split(separator: "\n") {
            let delimiters = line.ranges(of: "\"\"\"").count - line.ranges(of: "\\\"\"\"").count
            if delimiters % 2 == 1 {
                inMultilineString.toggle()
                continue
            }
            guard !inMultilineString, line.contains("import") else { continue }
            if let match = line.prefixMatch(of: pattern) { modules.insert(String(match.output.1)) }
        }
        return modules
    }

    /// The modules the Swift files in `target`'s folder under `root` import; throws if the folder cannot be read.
    static func imports(of target: Target, root: URL) throws -> Set<String> {
        let folder = root.appendingPathComponent(target.path)
        let excluded = target.excluded.map { folder.appendingPathComponent($0).standardizedFileURL.path }
        var modules: Set<String> = []
        for file in try Self.swiftFiles(in: folder) {
            guard !excluded.contains(where: { file.path == $0 || file.path.hasPrefix($0 + "/") }) else { continue }
            modules.formUnion(Self.imports(inSource: try String(contentsOf: file, encoding: .utf8)))
        }
        return modules
    }

    /// Every `.swift` file under `folder`; throws if it is missing.
    static func swiftFiles(in folder: URL) throws -> [URL] {
        let paths = try FileManager.default.subpathsOfDirectory(atPath: folder.path)
        return paths.filter { $0.hasSuffix(".swift") }.sorted().map { folder.appendingPathComponent($0).standardizedFileURL }
    }
}
