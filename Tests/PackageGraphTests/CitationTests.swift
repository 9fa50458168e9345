import Foundation
import Testing

/// Every citation in the docs and the code can be followed from a clone: it names a public source (Apple's or
/// Airship's pages, an RFC, a repository and file) or docs/references.md, never a file outside the repository.
@Suite struct CitationTests {
    /// A line that cites what a clone does not have.
    struct Finding: CustomStringConvertible, Equatable {
        var path: String
        var line: Int
        var text: String

        var description: String { "\(self.path):\(self.line): \(self.text)" }
    }

    /// Citations of files that are not in the repository: a path out of it, the research notes Blimp was built from
    /// (by name, or as a bare `reference §` section), and such a citation split across lines.
    static var unfollowable: [Regex<Substring>] {
        [
            #/\.\./shared/#,
            #/shared/reference/#,
            #/(?:apns-live-activities|airship-api|airship-ios-sdk)\.md/#,
            #/reference:?\s*§/#,
            #/\(reference:?\s*$/#,
            #/^\s*(?://+|--)\s*§\s*\d/#,
        ]
    }

    /// What the check reads, from the package's root.
    static let checked = ["README.md", "schema.sql", "docs", "Sources", "Tests"]

    /// Words one of ``unfollowable`` needs: lines without any skip the (slower) regular expressions.
    static let clues = ["shared", ".md", "reference", "§"]

    /// The lines of `text` that cite what a clone does not have.
    static func findings(in text: String, path: String) -> [Finding] {
        let patterns = Self.unfollowable
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            Self.clues.contains { line.contains($0) } && patterns.contains { line.contains($0) }
                ? Finding(path: path, line: index + 1, text: line.trimmingCharacters(in: .whitespaces)) : nil
        }
    }

    @Test func everyCitationCanBeFollowedFromAClone() {
        let root = PackageGraphTests.root
        let this = URL(fileURLWithPath: #filePath).standardizedFileURL.path
        var findings: [Finding] = []
        var read = 0
        for entry in Self.checked {
            let url = root.appendingPathComponent(entry)
            var isFolder: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), "\(entry) is missing")
            let files = isFolder.boolValue
                ? FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? [] : [url]
            for file in files where file.standardizedFileURL.path != this {
                guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
                read += 1
                findings += Self.findings(in: text, path: String(file.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)))
            }
        }
        #expect(read > 100, "only \(read) files read under \(root.path)")
        #expect(findings.isEmpty, "cite a public URL or docs/references.md instead:\n\(findings.map(\.description).joined(separator: "\n"))")
    }

    @Test func anUnfollowableCitationIsFound() {
        let text = """
            /// The reasons Apple documents (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
            /// A channel's storage policy (docs/references.md#broadcast-channels), and RFC 7518 §3.4 for the signature.
            /// Every reason (reference: apns-live-activities.md §1.5).
            /// A collapse id is at most 64 bytes (reference §1.2).
            What the SDK does is taken from its source (`../shared/reference/airship-ios-sdk.md`).
            /// The named user rules (reference: airship-api.md
            /// §1.3), and more.
            """
        #expect(Self.findings(in: text, path: "x.swift").map(\.line) == [3, 4, 5, 6, 7])
    }
}
