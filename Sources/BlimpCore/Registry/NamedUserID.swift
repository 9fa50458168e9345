import Foundation

/// The rules for a named user id (docs/references.md#airship-channels-and-named-users): 1 to 128 characters (at most 512 bytes), no
/// surrounding white space.
public enum NamedUserID {
    /// `id` if it follows the rules, else why not.
    public static func check(_ id: String, path: String) throws(InvalidField) -> String {
        try TextLimit.name.check(id, at: path, "a named user id")
        guard id.trimmingCharacters(in: .whitespacesAndNewlines) == id else {
            throw InvalidField(path, "a named user id is 1 to 128 characters without surrounding white space")
        }
        return id
    }
}
