/// `apns-id`: a canonical UUID that APNs echoes back in lower case (https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns; https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
/// Requests without one get a new id from their connection's ``SimulatorConnectionState/ids``.
enum APNsID {
    /// The request's `apns-id` in lower case; `nil` unless it is a canonical UUID.
    static func echo(_ header: String) -> String? {
        guard Self.isCanonical(header) else { return nil }
        return header.utf8.contains(where: { (0x41...0x46).contains($0) }) ? header.lowercased() : header
    }

    /// Whether `value` is 8-4-4-4-12 hex digits in either case.
    private static func isCanonical(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            guard bytes.count == 36 else { return false }
            return bytes.indices.allSatisfy { offset in
                switch offset {
                case 8, 13, 18, 23: bytes[offset] == UInt8(ascii: "-")
                default: Self.isHexDigit(bytes[offset])
                }
            }
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }
}
