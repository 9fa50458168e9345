import BlimpCore
import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Where a webhook's host resolves, checked against ``EndpointAddress``: the API refuses an endpoint that resolves to
/// a private, loopback or link-local address, and workers check again before each attempt (a name can be pointed
/// elsewhere after it was accepted). Resolved with the system's resolver (`getaddrinfo`) on NIO's blocking pool.
public enum EndpointResolution {
    /// Why `url`'s host may not be delivered to; `nil` when every address it resolves to is public.
    public static func refusal(of url: String) async -> String? {
        guard let host = URL(string: url)?.host, !host.isEmpty else { return "it names no host" }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses: [[UInt8]]
        do {
            addresses = try await NIOThreadPool.singleton.runIfActive { try Self.resolve(bare) }
        } catch {
            return "its host \(host) does not resolve"
        }
        guard !addresses.isEmpty else { return "its host \(host) does not resolve" }
        guard addresses.allSatisfy(EndpointAddress.isPublic) else {
            return "its host \(host) resolves to a private, loopback or link-local address"
        }
        return nil
    }

    struct Unresolved: Error {}

    /// Every address `host` resolves to, as bytes in network order.
    private static func resolve(_ host: String) throws -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { throw Unresolved() }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var next = list
        while let entry = next {
            if let address = entry.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                        withUnsafeBytes(of: ipv4.pointee.sin_addr) { addresses.append(Array($0)) }
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                        withUnsafeBytes(of: ipv6.pointee.sin6_addr) { addresses.append(Array($0)) }
                    }
                default: break
                }
            }
            next = entry.pointee.ai_next
        }
        return addresses
    }
}
