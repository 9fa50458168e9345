/// A Swift file's text split as a rule about queries reads it: its code, with comments and the text of string literals
/// blanked (lines kept, so an offset in it is on the same line as in the file), and the text of each string literal,
/// its interpolations left out (they are code, and their own literals are literals). Single-line, multi-line and raw
/// (`#"…"#`) literals are told apart; a regex literal is taken for code, which no source here writes.
struct SwiftSource {
    /// One string literal's own text.
    struct Literal {
        /// Its characters as UTF-8, an interpolation standing as one `\u{1}`.
        var text: [UInt8]
        /// The line of each byte of ``text``, from 1.
        var lines: [Int]
        /// It is the `static let sql` of a `PostgresPreparedStatement`, whose placeholders must be numbered.
        var isPreparedStatementSQL: Bool
    }

    /// The code, as UTF-8 of the file's length.
    private(set) var code: [UInt8]
    private(set) var literals: [Literal]

    init(_ source: String) {
        var scanner = Scanner(Array(source.utf8))
        scanner.scanCode(untilInterpolationEnds: false)
        self.code = scanner.code
        self.literals = scanner.literals
    }

    /// The line, from 1, of `offset` in ``code``.
    func line(ofCode offset: Int) -> Int {
        1 + self.code[..<offset].count(where: { $0 == Scanner.newline })
    }

    private struct Scanner {
        static let newline = UInt8(ascii: "\n")
        static let quote = UInt8(ascii: "\"")
        static let hash = UInt8(ascii: "#")
        static let backslash = UInt8(ascii: "\\")
        static let lineComment = Array("//".utf8)
        static let commentOpening = Array("/*".utf8)
        static let commentClosing = Array("*/".utf8)
        static let multilineQuote = [quote, quote, quote]

        let bytes: [UInt8]
        var index = 0
        var line = 1
        var code: [UInt8] = []
        var literals: [Literal] = []

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            self.code.reserveCapacity(bytes.count)
        }

        /// Code up to the end of the file or, in an interpolation, up to (not past) the `)` that closes it.
        mutating func scanCode(untilInterpolationEnds interpolation: Bool) {
            var depth = 0
            while self.index < self.bytes.count {
                switch self.bytes[self.index] {
                case UInt8(ascii: "/") where self.starts(with: Self.lineComment):
                    while self.index < self.bytes.count, self.bytes[self.index] != Self.newline { self.blank() }
                case UInt8(ascii: "/") where self.starts(with: Self.commentOpening):
                    self.scanBlockComment()
                case Self.quote:
                    self.scanString(hashes: 0)
                case Self.hash where self.stringOpening() != nil:
                    self.scanString(hashes: self.stringOpening() ?? 0)
                case UInt8(ascii: "("):
                    depth += 1
                    self.keep()
                case UInt8(ascii: ")"):
                    if interpolation && depth == 0 { return }
                    depth -= 1
                    self.keep()
                default:
                    self.keep()
                }
            }
        }

        /// A comment, nested ones included.
        private mutating func scanBlockComment() {
            var depth = 0
            while self.index < self.bytes.count {
                if self.starts(with: Self.commentOpening) {
                    depth += 1
                    self.blank(2)
                } else if self.starts(with: Self.commentClosing) {
                    depth -= 1
                    self.blank(2)
                    if depth == 0 { return }
                } else {
                    self.blank()
                }
            }
        }

        /// The number of `#` of a string literal opening here, or `nil` when none does.
        private func stringOpening() -> Int? {
            var end = self.index
            while end < self.bytes.count, self.bytes[end] == Self.hash { end += 1 }
            return end < self.bytes.count && self.bytes[end] == Self.quote ? end - self.index : nil
        }

        private mutating func scanString(hashes: Int) {
            let raw = [UInt8](repeating: Self.hash, count: hashes)
            let lineStart = (self.code.lastIndex(of: Self.newline).map { $0 + 1 }) ?? 0
            let before = String(decoding: self.code[lineStart...], as: UTF8.self)
            let prepared = before.contains("sql") && before.firstMatch(of: #/\bstatic\s+(?:let|var)\s+sql\s*(?::\s*String\s*)?=\s*$/#) != nil
            var literal = Literal(text: [], lines: [], isPreparedStatementSQL: prepared)
            self.blank(hashes)
            let escape = [Self.backslash] + raw
            let closing: [UInt8]
            if self.starts(with: Self.multilineQuote) {
                closing = Self.multilineQuote + raw
                self.blank(3)
            } else {
                closing = [Self.quote] + raw
                self.blank()
            }
            while self.index < self.bytes.count {
                if self.starts(with: closing) {
                    self.blank(closing.count)
                    break
                }
                if self.starts(with: escape) {
                    self.blank(1 + hashes)
                    guard self.index < self.bytes.count else { break }
                    if self.bytes[self.index] == UInt8(ascii: "(") {
                        literal.text.append(1)
                        literal.lines.append(self.line)
                        self.blank()
                        self.scanCode(untilInterpolationEnds: true)
                        if self.index < self.bytes.count { self.blank() }
                        continue
                    }
                }
                literal.text.append(self.bytes[self.index])
                literal.lines.append(self.line)
                self.blank()
            }
            self.literals.append(literal)
        }

        private func starts(with prefix: [UInt8]) -> Bool {
            self.bytes[self.index...].starts(with: prefix)
        }

        /// Copies the next byte into the code.
        private mutating func keep() {
            self.take(self.bytes[self.index])
        }

        /// Blanks the next `count` bytes in the code, newlines aside.
        private mutating func blank(_ count: Int = 1) {
            for _ in 0..<count where self.index < self.bytes.count {
                self.take(self.bytes[self.index] == Self.newline ? Self.newline : UInt8(ascii: " "))
            }
        }

        private mutating func take(_ byte: UInt8) {
            if self.bytes[self.index] == Self.newline { self.line += 1 }
            self.code.append(byte)
            self.index += 1
        }
    }
}
