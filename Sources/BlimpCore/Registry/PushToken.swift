/// An APNs token as a device or server sends it, checked by ``DeviceToken``'s rule (so what is stored is what a
/// worker can send) and kept as lower-case hex; anything else is refused, saying why.
public enum PushToken {
    /// `text` in lower case, or why it is not a token.
    public static func normalize(_ text: String, path: String) throws(InvalidField) -> String {
        if let token = DeviceToken(text) { return token.hex }
        let count = text.utf8.count
        guard DeviceToken.hexLength.contains(count), count % 2 == 0 else {
            throw InvalidField(path, "a token is 64 to 200 hex digits, an even number (got \(count) characters)")
        }
        throw InvalidField(path, "a token is hex digits only")
    }
}
