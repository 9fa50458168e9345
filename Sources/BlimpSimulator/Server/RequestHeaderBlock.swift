import NIOHPACK

/// A request's decoded header block, checked as HTTP/2 requires of any request (RFC 9113 §8.2, §8.3) before APNs's
/// own rules apply: a malformed block is a stream error, answered with RST_STREAM `PROTOCOL_ERROR`, not an APNs reason.
struct RequestHeaderBlock {
    var method = ""
    var path = ""
    /// The regular headers in order.
    var headers: [(name: String, value: String)] = []

    /// Whether the block broke HTTP/2's rules for requests.
    struct Malformed: Error {}

    init(_ block: HPACKHeaders) throws(Malformed) {
        var scheme: String?
        var method: String?
        var path: String?
        var regularSeen = false
        self.headers.reserveCapacity(block.count)
        for (name, value, _) in block {
            // Field names are lower case, with no separators or controls (§8.2.1).
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isNameByte) || name.utf8.first == UInt8(ascii: ":") else {
                throw Malformed()
            }
            // Values carry no NUL, CR or LF, and no leading or trailing whitespace (§8.2.1).
            guard !value.utf8.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }),
                value.utf8.first.map(Self.isWhitespace) != true, value.utf8.last.map(Self.isWhitespace) != true
            else { throw Malformed() }
            if name.utf8.first == UInt8(ascii: ":") {
                // Pseudo-headers come first, once each, and only the request ones (§8.3).
                guard !regularSeen else { throw Malformed() }
                switch name {
                case ":method" where method == nil: method = value
                case ":path" where path == nil: path = value
                case ":scheme" where scheme == nil: scheme = value
                case ":authority": break
                default: throw Malformed()
                }
            } else {
                regularSeen = true
                guard name.utf8.allSatisfy(Self.isNameByte), !Self.connectionSpecific.contains(name),
                    name != "te" || value == "trailers"
                else { throw Malformed() }
                self.headers.append((name, value))
            }
        }
        guard let method, let path, scheme != nil, !path.isEmpty else { throw Malformed() }
        self.method = method
        self.path = path
    }

    /// Headers that belong to HTTP/1.1 connections and are malformed in HTTP/2 (§8.2.2).
    private static let connectionSpecific: Set<String> = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]

    /// A token character other than an upper-case letter (RFC 9110 §5.6.2).
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
