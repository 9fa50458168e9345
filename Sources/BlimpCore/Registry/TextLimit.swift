/// How long a name from outside may be. Airship counts characters; Blimp bounds bytes as well, so that one character
/// carrying thousands of combining marks cannot fill a row or an index entry. The schema's CHECKs hold the same byte
/// limits.
public struct TextLimit: Sendable {
    public let characters: ClosedRange<Int>
    public let bytes: Int

    /// Tags, tag groups, named user ids and attribute keys: 1 to 128 characters, at most 512 bytes.
    public static let name = TextLimit(characters: 1...128, bytes: 512)
    /// What the SDK reports of a device (locale, time zone, alias): at most 128 characters and 512 bytes.
    public static let label = TextLimit(characters: 0...128, bytes: 512)
    /// Live Activity names, activity ids and ActivityAttributes types: 1 to 256 characters, at most 1,024 bytes.
    public static let activity = TextLimit(characters: 1...256, bytes: 1024)

    /// `text` if it is within the limit and holds no NUL (which PostgreSQL's text cannot store), else an error at
    /// `path` that names `what`.
    @discardableResult
    public func check(_ text: String, at path: String, _ what: String) throws(InvalidField) -> String {
        let bytes = text.utf8.count
        guard bytes <= self.bytes, self.characters.contains(text.count) else {
            let characters =
                self.characters.lowerBound == 0
                ? "at most \(self.characters.upperBound) characters"
                : "\(self.characters.lowerBound) to \(self.characters.upperBound) characters"
            throw InvalidField(path, "\(what) is \(characters) and at most \(self.bytes) bytes")
        }
        guard !text.utf8.contains(0) else { throw InvalidField(path, "\(what) must not contain NUL") }
        return text
    }
}
