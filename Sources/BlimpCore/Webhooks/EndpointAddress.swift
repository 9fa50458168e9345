/// Whether an address a webhook's host resolves to may be delivered to: not a loopback, private, link-local,
/// unique-local, shared (carrier-grade NAT), unspecified, multicast or reserved address (RFC 6890's special-purpose
/// registries), so that an app's endpoint cannot reach the deployment's own network.
public enum EndpointAddress {
    /// Whether `bytes` (4 for IPv4, 16 for IPv6, network order) is a public unicast address.
    public static func isPublic(_ bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4: return Self.isPublicIPv4(bytes)
        case 16:
            // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms are their IPv4 address.
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff { return Self.isPublicIPv4(Array(bytes[12...])) }
            if bytes[0..<12].allSatisfy({ $0 == 0 }) { return false }  // ::, ::1 and the deprecated compatible form
            if bytes[0] == 0xfc || bytes[0] == 0xfd { return false }  // fc00::/7, unique local
            if bytes[0] == 0xfe, bytes[1] & 0xc0 == 0x80 { return false }  // fe80::/10, link-local
            if bytes[0] == 0xfe, bytes[1] & 0xc0 == 0xc0 { return false }  // fec0::/10, site-local (deprecated)
            if bytes[0] == 0xff { return false }  // multicast
            if bytes[0] == 0x20, bytes[1] == 0x01, bytes[2] == 0x0d, bytes[3] == 0xb8 { return false }  // 2001:db8::/32, documentation
            if bytes[0] == 0x00, bytes[1] == 0x64, bytes[2] == 0xff, bytes[3] == 0x9b { return Self.isPublicIPv4(Array(bytes[12...])) }  // NAT64
            return true
        default: return false
        }
    }

    private static func isPublicIPv4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): false  // this network, private, loopback
        case (100, 64...127): false  // shared address space (carrier-grade NAT)
        case (169, 254): false  // link-local, cloud metadata
        case (172, 16...31): false  // private
        case (192, 168): false  // private
        case (192, 0) where b[2] == 0 || b[2] == 2: false  // IETF protocol assignments, documentation
        case (198, 18...19): false  // benchmarking
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: false  // documentation
        case (224...255, _): false  // multicast, reserved, broadcast
        default: true
        }
    }
}
