/// An APNs token as Blimp stores it: lower-case hex.
///
/// Device tokens are 32 bytes today, Live Activity and push-to-start tokens longer; Apple only promises "variable
/// length", so anything from 32 to 100 bytes is accepted and the rest is refused as absurd.
public enum PushToken {
    /// The accepted length in hex digits.
    public static let hexLength = 64...200

    /// `text` in lower case, or why it is not a token.
    public static func normalize(_ text: String, path: String) throws(InvalidField) -> String {
        let bytes = Array(text.utf8)
        guard Self.hexLength.contains(bytes.count), bytes.count % 2 == 0 else {
            throw InvalidField(path, "a token is 64 to 200 hex digits, an even number (got \(bytes.count) characters)")
        }
        var lowered = bytes
        for index in lowered.indices {
            switch lowered[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
                continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                lowered[index] += 0x20
            default:
                throw InvalidField(path, "a token is hex digits only")
            }
        }
        return String(decoding: lowered, as: UTF8.self)
    }
}
