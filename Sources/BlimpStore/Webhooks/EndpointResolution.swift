import BlimpCore
import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Where a webhook's host resolves, checked against ``EndpointAddress``: the API refuses an endpoint that resolves to
/// a private, loopback or link-local address, and workers check again before each attempt (a name can be pointed
/// elsewhere after it was accepted) and connect to the address they checked, not to a second answer of the resolver
/// (DNS rebinding). Resolved with the system's resolver (`getaddrinfo`) on NIO's blocking pool.
public enum EndpointResolution {
    /// A host a delivery may go to, and the address its connection must use: the first the resolver gave (RFC 6724's
    /// order), in text.
    public struct Checked: Sendable, Hashable {
        public var host: String
        public var address: String

        public init(host: String, address: String) {
            self.host = host
            self.address = address
        }
    }

    /// Why a delivery may not go to an endpoint.
    public struct Refusal: Error, Sendable, Equatable {
        public var reason: String
    }

    /// `url`'s host and the address to connect to, once every address the host resolves to is public (any address,
    /// with `allowingPrivate`).
    public static func check(_ url: String, allowingPrivate: Bool = false) async -> Result<Checked, Refusal> {
        guard let host = URL(string: url)?.host, !host.isEmpty else { return .failure(Refusal(reason: "it names no host")) }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses: [Address]
        do {
            addresses = try await NIOThreadPool.singleton.runIfActive { try Self.resolve(bare) }
        } catch {
            return .failure(Refusal(reason: "its host \(host) does not resolve"))
        }
        guard let first = addresses.first else { return .failure(Refusal(reason: "its host \(host) does not resolve")) }
        guard allowingPrivate || addresses.allSatisfy({ EndpointAddress.isPublic($0.bytes) }) else {
            return .failure(Refusal(reason: "its host \(host) resolves to a private, loopback or link-local address"))
        }
        return .success(Checked(host: bare, address: first.text))
    }

    /// Why `url`'s host may not be delivered to; `nil` when every address it resolves to is public.
    public static func refusal(of url: String) async -> String? {
        guard case .failure(let refusal) = await Self.check(url) else { return nil }
        return refusal.reason
    }

    /// An address as bytes in network order, and as text.
    struct Address {
        var bytes: [UInt8]
        var text: String
    }

    struct Unresolved: Error {}

    /// Every address `host` resolves to, in the resolver's order.
    private static func resolve(_ host: String) throws -> [Address] {
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
        var addresses: [Address] = []
        var next = list
        while let entry = next {
            if let address = entry.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                        addresses.append(Self.address(withUnsafeBytes(of: ipv4.pointee.sin_addr) { Array($0) }, family: AF_INET))
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                        addresses.append(Self.address(withUnsafeBytes(of: ipv6.pointee.sin6_addr) { Array($0) }, family: AF_INET6))
                    }
                default: break
                }
            }
            next = entry.pointee.ai_next
        }
        return addresses
    }

    /// An address of `family` from its bytes (`in_addr` or `in6_addr`), with its text (`inet_ntop`).
    private static func address(_ bytes: [UInt8], family: Int32) -> Address {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        _ = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        return Address(bytes: bytes, text: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
